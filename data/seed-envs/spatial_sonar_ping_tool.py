# skill: spatial-reasoning
# setting: tool-use
# hint: A ping reports |dx| + |dy|; ping from two corners on the same edge, such as (0, 0) and (7, 0), and the two sums give x and y.
import json
import random
import re


class SonarPingEnv:
    MAX_STEPS = 6

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.sub = (rng.randint(0, 7), rng.randint(0, 7))
        self.steps, self.done, self.won = 0, False, False
        obs = (
            "A submarine hides at a cell (x, y) of an 8x8 sea, x and y from 0 to 7.\n"
            "Tools (reply with one JSON call per turn: {\"name\": ..., \"arguments\": {...}}):\n"
            "- ping {\"x\": int, \"y\": int} : grid distance |dx| + |dy| from that cell to the submarine\n"
            "- submit {\"x\": int, \"y\": int} : name the submarine's cell (ends the task)\n"
            f"You have {self.MAX_STEPS} turns."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        match = re.search(r"\{.*\}", str(action), re.S)
        try:
            call = json.loads(match.group(0))
            args = call["arguments"]
            cell = (int(args["x"]), int(args["y"]))
            name = call["name"]
        except Exception:
            cell, name = None, None
        if name == "submit":
            self.done, self.won = True, cell == self.sub
            obs = "Found the submarine!" if self.won else f"Wrong cell; it was at {self.sub}."
            return obs, float(self.won), True, False, {"success": self.won}
        if name == "ping":
            dist = abs(cell[0] - self.sub[0]) + abs(cell[1] - self.sub[1])
            obs = f"Ping from {cell}: distance {dist}."
        else:
            obs = "Error: call ping or submit with integer x and y."
        self.done = self.steps >= self.MAX_STEPS
        return obs + " Out of turns." * self.done, 0.0, False, self.done, {"success": False}
