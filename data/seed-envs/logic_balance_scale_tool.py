# skill: logical-deduction
# setting: tool-use
# hint: Weigh two equal groups and keep a third group off the scale: if the pans balance, the heavy coin is off the scale, otherwise it is in the heavier pan. Repeat on the smaller group.
import json
import random
import re


class BalanceScaleEnv:
    MAX_STEPS = 8
    MAX_WEIGHINGS = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.n = rng.randint(6, 12)
        self.heavy = rng.randint(1, self.n)
        self.steps, self.weighings = 0, 0
        self.done, self.won = False, False
        obs = (
            f"There are {self.n} coins numbered 1 to {self.n}. All weigh the same except one, which is heavier. "
            f"Find it with at most {self.MAX_WEIGHINGS} weighings on a balance scale.\n"
            "Tools (reply with one JSON call per turn: {\"name\": ..., \"arguments\": {...}}):\n"
            "- weigh {\"left\": [coin numbers], \"right\": [coin numbers]} : compares the two pans\n"
            "- identify {\"coin\": number} : name the heavy coin (ends the task)\n"
            f"You have {self.MAX_STEPS} turns."
        )
        return obs, {}

    @staticmethod
    def _parse(action):
        text, dec = str(action), json.JSONDecoder()
        for match, _ in zip(re.finditer(r"\{", text), range(20)):
            try:
                obj = dec.raw_decode(text, match.start())[0]
            except Exception:
                continue
            if isinstance(obj, dict):
                return obj
        return None

    @staticmethod
    def _coin(c):
        return int(c) if isinstance(c, (int, str)) and str(c).strip().isdecimal() and len(str(c)) < 4 else None

    def _weigh(self, left, right):
        if not (isinstance(left, list) and isinstance(right, list) and left and right):
            return "Error: left and right must be non-empty lists of coin numbers."
        left, right = [self._coin(c) for c in left], [self._coin(c) for c in right]
        coins = left + right
        if None in coins or len(set(coins)) != len(coins) or not all(1 <= c <= self.n for c in coins):
            return f"Error: use each coin at most once, numbers 1 to {self.n}."
        if self.weighings >= self.MAX_WEIGHINGS:
            return "No weighings left. Call identify."
        self.weighings += 1
        diff = len(left) - len(right) or (self.heavy in left) - (self.heavy in right)
        side = "the left pan is heavier" if diff > 0 else "the right pan is heavier" if diff < 0 else "the pans balance"
        return f"Weighing {self.weighings}: {side}. Weighings left: {self.MAX_WEIGHINGS - self.weighings}."

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        call = self._parse(action) or {}
        args, name = call.get("arguments", {}), call.get("name")
        if not call or not isinstance(args, dict):
            obs = "Could not read a tool call. Reply with JSON like {\"name\": \"weigh\", \"arguments\": {...}}."
        elif name == "weigh":
            obs = self._weigh(args.get("left"), args.get("right"))
        elif name == "identify":
            self.done = True
            self.won = self._coin(args.get("coin")) == self.heavy
            obs = "Correct, that is the heavy coin!" if self.won else f"Wrong coin; the heavy one was {self.heavy}."
            return obs, float(self.won), True, False, {"success": self.won}
        else:
            obs = "Unknown tool. Use weigh or identify."
        if self.steps >= self.MAX_STEPS:
            self.done = True
            return obs + " Out of turns.", 0.0, False, True, {"success": False}
        return obs, 0.0, False, False, {"success": False}
