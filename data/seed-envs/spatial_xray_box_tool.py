# skill: spatial-reasoning
# setting: tool-use
# hint: A projection is nonzero only over the box; its first nonzero index is the start and the nonzero count the size.
import json
import random
import re


class XrayBoxEnv:
    MAX_STEPS = 5

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        w, h = rng.randint(1, 5), rng.randint(1, 5)
        left, top = rng.randint(0, 8 - w), rng.randint(0, 8 - h)
        self.box = {"left": left, "top": top, "width": w, "height": h}
        rows = [w if top <= r < top + h else 0 for r in range(8)]
        cols = [h if left <= c < left + w else 0 for c in range(8)]
        self.proj = {"rows": rows, "cols": cols}
        self.steps, self.done, self.won = 0, False, False
        obs = (
            "An 8x8 x-ray image (rows and columns 0 to 7) shows one box.\n"
            "Tools (reply with one JSON call per turn: {\"name\": ..., \"arguments\": {...}}):\n"
            "- project {\"axis\": \"rows\"|\"cols\"} : box pixels per row or per column\n"
            "- submit {\"left\": int, \"top\": int, \"width\": int, \"height\": int} : the box (ends the task)\n"
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
            name, args = call["name"], dict(call["arguments"])
        except Exception:
            name, args = None, {}
        axis = str(args.get("axis"))
        if name == "submit":
            self.done, self.won = True, args == self.box
            obs = "Correct!" if self.won else f"Wrong: {self.box}."
            return obs, float(self.won), True, False, {"success": self.won}
        if name == "project" and axis in self.proj:
            obs = f"{axis}: {self.proj[axis]}"
        else:
            obs = "Error: bad call."
        self.done = self.steps >= self.MAX_STEPS
        return obs, 0.0, False, self.done, {"success": False}
