# skill: logical-deduction
# setting: tool-use
# hint: Only a vowel card or an odd card can break the rule, so flip exactly those two.
import json
import random
import re


class RuleCardsEnv:
    MAX_STEPS = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.front = [rng.choice(s) for s in ("AEIU", "BKMT", "2468", "3579")]
        rng.shuffle(self.front)
        self.back = [rng.choice("2346") if f.isalpha() else rng.choice("AKT") for f in self.front]
        bad = [f for f, b in zip(self.front, self.back) if f in "AEIU3579" and b in "AEIU3579"]
        self.answer = "broken" if bad else "holds"
        self.steps, self.done, self.won = 0, False, False
        obs = (
            f"Cards 1-4 show {' '.join(self.front)}. Each has a letter and a digit on its two sides.\n"
            "Rule: a card with a vowel has an even digit.\n"
            "Tools (reply with one JSON call per turn: {\"name\": ..., \"arguments\": {...}}):\n"
            "- flip {\"card\": 1-4} : see its back\n"
            "- submit {\"verdict\": \"holds\" or \"broken\"} : ends the task\n"
            "You have 3 turns."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        match = re.search(r"\{.*\}", str(action), re.S)
        try:
            call = json.loads(match.group(0))
            name, args = call["name"], call["arguments"]
            card = int(args.get("card", 0)) - 1
        except Exception:
            name, args, card = None, {}, -1
        if name == "submit":
            self.done = True
            self.won = str(args.get("verdict")).lower() == self.answer
            obs = "Correct!" if self.won else "Wrong."
            return obs, float(self.won), True, False, {"success": self.won}
        obs = "Invalid call."
        if name == "flip" and 0 <= card < 4:
            obs = f"The back of card {card + 1} is {self.back[card]}."
        self.done = self.steps >= self.MAX_STEPS
        return obs, 0.0, False, self.done, {"success": False}
