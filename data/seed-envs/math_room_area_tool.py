# skill: mathematical-reasoning
# setting: tool-use
# hint: Measure each named room, multiply its length by its width, and add up the areas.
import json
import random
import re


class RoomAreaEnv:
    MAX_STEPS = 7
    ROOMS = ["kitchen", "hall", "bedroom", "study", "office"]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.sizes = {r: (rng.randint(2, 9), rng.randint(2, 7)) for r in self.ROOMS}
        names = rng.sample(self.ROOMS, 3)
        self.answer = sum(self.sizes[r][0] * self.sizes[r][1] for r in names)
        self.steps = 0
        self.done = False
        self.won = False
        obs = (
            f"Find the total area in square metres of the {', '.join(names)}.\n"
            "One JSON call per turn, {\"name\": ..., \"arguments\": {...}}. Tools:\n"
            "- measure {\"room\": name} : its size\n"
            "- submit {\"area\": integer} : answer, ends the task\n"
            f"You have {self.MAX_STEPS} turns."
        )
        return obs, {}

    def _parse(self, action):
        try:
            call = json.loads(re.search(r"\{.*\}", str(action), re.S).group(0))
        except Exception:
            return {}
        return call if isinstance(call, dict) else {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        call = self._parse(action)
        args = call.get("arguments")
        args = args if isinstance(args, dict) else {}
        if call.get("name") == "submit":
            self.done = True
            self.won = str(args.get("area")) == str(self.answer)
            obs = "Correct!" if self.won else f"Wrong; it was {self.answer}."
            return obs, float(self.won), True, False, {"success": self.won}
        size = self.sizes.get(str(args.get("room")).lower())
        if call.get("name") == "measure" and size:
            obs = f"It is {size[0]} m by {size[1]} m."
        else:
            obs = "Unknown call."
        self.done = self.steps >= self.MAX_STEPS
        return obs, 0.0, False, self.done, {"success": False}
