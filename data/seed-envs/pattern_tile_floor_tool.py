# skill: pattern-recognition
# setting: tool-use
# hint: Check how colours change along a row and down a column, then use a remainder.
import json
import random
import re


class TileFloorEnv:
    MAX_STEPS = 8

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.a, self.b = rng.choice([(1, 0), (0, 1), (1, 1)])
        self.n = rng.randint(2, 3)
        self.colors = rng.sample(["red", "blue", "white"], self.n)
        r, c = rng.randint(20, 99), rng.randint(20, 99)
        self.answer = self.colors[(self.a * r + self.b * c) % self.n]
        self.steps, self.done, self.won = 0, False, False
        obs = (
            f"Tiles repeat a colour pattern. What colour is row {r}, column {c}?\n"
            "One JSON call per turn, {\"name\": ..., \"arguments\": {...}}. Tools:\n"
            "- look {\"row\": int, \"col\": int} : a tile's colour (1 to 6 each)\n"
            "- submit {\"color\": str} : answer, ends the task\n"
            f"You have {self.MAX_STEPS} turns."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        try:
            call = json.loads(re.search(r"\{.*\}", str(action), re.S).group(0))
            name, args = call["name"], dict(call["arguments"])
        except Exception:
            name, args = None, {}
        if name == "look":
            r, c = args.get("row"), args.get("col")
            if r in range(1, 7) and c in range(1, 7):
                obs = f"It is {self.colors[int(self.a * r + self.b * c) % self.n]}."
            else:
                obs = "Use 1 to 6."
        elif name == "submit":
            self.done, self.won = True, str(args.get("color")).strip().lower() == self.answer
            obs = "Correct!" if self.won else f"No, it is {self.answer}."
        else:
            obs = "Call look or submit."
        if self.steps >= self.MAX_STEPS and not self.done:
            self.done, obs = True, obs + " Out of turns."
        return obs, float(self.won), self.done, False, {"success": self.won}
