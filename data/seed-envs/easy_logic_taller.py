# skill: logical-deduction
# setting: games
# hint: Whoever has more of a trait, the other person has less of it; match the question word to the right person.
import random
import re


class TallerEnv:
    MAX_TRIES = 3
    PAIRS = [("taller", "shorter"), ("older", "younger"), ("faster", "slower")]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        a, b = rng.sample(["Tom", "Ann", "Raj", "Eva", "Kai", "Lia", "Max", "Zoe"], 2)
        more, less = rng.choice(self.PAIRS)
        ask = rng.choice([more, less])
        self.answer = a if ask == more else b
        self.options = rng.sample([a, b], 2)
        self.tries, self.done, self.won = 0, False, False
        obs = (f"{a} is {more} than {b}.\nWho is {ask}? Options: {', '.join(self.options)}.\n"
               "Answer as \\boxed{NAME}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        text = str(action).lower()
        text = text[text.rfind("\\boxed{") + 7:] if "\\boxed{" in text else text
        said = [o for w in re.findall(r"[a-z]+", text) for o in self.options if o.lower() == w]
        g = said[-1] if said else None
        if g == self.answer:
            self.done = self.won = True
            return "Correct!", (1.0, 0.6, 0.3)[self.tries - 1], True, False, {"success": True}
        msg = f"Not {g}." if g else "Pick one of the two names."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} It was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " Try again.", 0.0, False, False, {"success": False}

# --- solver ---
import re

MORE = {"taller": "shorter", "older": "younger", "faster": "slower"}


def solve(observations):
    a, more, b = re.search(r"(\w+) is (\w+) than (\w+)\.", observations[0]).groups()
    ask = re.search(r"Who is (\w+)\?", observations[0]).group(1)
    return "\\boxed{%s}" % (a if ask == more else b)
