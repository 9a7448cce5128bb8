# skill: mathematical-reasoning
# setting: games
# hint: Add the amount in one box again and again, once for every box, and keep a running total.
import random
import re


class PensBoxesEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        per = rng.randint(2, 5)
        boxes = rng.randint(2, 20 // per)
        item = rng.choice(["pens", "crayons", "batteries", "test tubes"])
        self.answer = per * boxes
        self.tries, self.done, self.won = 0, False, False
        obs = (f"There are {boxes} boxes and each box holds {per} {item}.\n"
               f"How many {item} are there in all?\n"
               "Write the answer as \\boxed{NUMBER}. You have 3 tries.")
        return obs, {}

    def _parse(self, action):
        raw = str(action)
        at = raw.rfind("\\boxed{")
        part = raw if at < 0 else raw[at + 7:]
        nums = [n for n in re.findall(r"-?\d+", part) if len(n) < 7]
        return int(nums[-1]) if nums else None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        g = self._parse(action)
        if g == self.answer:
            self.done = self.won = True
            return "Correct!", (1.0, 0.6, 0.3)[self.tries - 1], True, False, {"success": True}
        text = "That is not a number." if g is None else ("Too high." if g > self.answer else "Too low.")
        if self.tries == self.MAX_TRIES:
            self.done = True
            return f"{text} The total was {self.answer}.", 0.0, True, False, {"success": False}
        return text + " Try again.", 0.0, False, False, {"success": False}

# --- solver ---
import re


def solve(observations):
    boxes, per = (int(n) for n in re.findall(r"\d+", observations[0])[:2])
    return "\\boxed{%d}" % (boxes * per)
