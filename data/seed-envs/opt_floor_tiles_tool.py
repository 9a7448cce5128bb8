# skill: optimisation
# setting: tool-use
# hint: The biggest square tile that fits a rectangle exactly has the greatest common divisor of the two sides.
import json
import random
import re


class FloorTilesEnv:
    MAX_STEPS = 6

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        size = rng.choice([5, 6, 8, 10, 12, 15, 20, 25, 30])
        self.width, self.length = size * rng.randint(3, 12), size * rng.randint(13, 25)
        a, b = self.width, self.length
        while b:
            a, b = b, a % b
        self.best = a
        self.steps, self.done, self.won = 0, False, False
        obs = (
            "Cover a rectangular floor with as few equal square tiles as possible; no tile may be cut.\n"
            "Tools (reply with one JSON call per turn: {\"name\": ..., \"arguments\": {...}}):\n"
            "- measure {} : the floor's width and length in cm\n"
            "- order {\"size\": n} : order tiles of n cm (ends the task)\n"
            f"You have {self.MAX_STEPS} turns."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        try:
            call = json.loads(re.search(r"\{.*\}", str(action), re.S).group(0))
            name, size = call["name"], int(call["arguments"].get("size", 0))
        except Exception:
            name, size = None, 0
        if name == "measure":
            obs = f"The floor is {self.width} cm by {self.length} cm."
        elif name == "order" and size > 0:
            self.done, self.won = True, size == self.best
            obs = "Fewest tiles!" if self.won else f"Not optimal; the best size was {self.best} cm."
            return obs, float(self.won), True, False, {"success": self.won}
        else:
            obs = "Call measure, or order with a size in cm."
        self.done = self.steps >= self.MAX_STEPS
        return obs + " Out of turns." * self.done, 0.0, False, self.done, {"success": False}
