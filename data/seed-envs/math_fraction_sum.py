# skill: mathematical-reasoning
# setting: games
# hint: Rewrite both fractions over the least common multiple of the denominators, combine the numerators, then divide top and bottom by their greatest common divisor.
import random
import re
from fractions import Fraction


class FractionSumEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        b, d = rng.randint(2, 12), rng.randint(2, 12)
        a, c = rng.randint(1, b - 1), rng.randint(1, 2 * d)
        self.op = rng.choice(["+", "-"])
        self.answer = Fraction(a, b) + Fraction(c, d) if self.op == "+" else Fraction(a, b) - Fraction(c, d)
        self.tries = 0
        self.done = False
        self.won = False
        obs = (
            f"Compute {a}/{b} {self.op} {c}/{d}. Write the result in lowest terms as p/q "
            f"(a whole number may be written without /q, negatives as -p/q) inside \\boxed{{...}}. "
            f"You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    @staticmethod
    def _parse(action):
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        if not boxed:
            return None
        m = re.fullmatch(r"\s*(-?)\s*(\d{1,9})\s*(?:/\s*(\d{1,9}))?\s*", boxed[-1])
        if not m:
            return None
        num, den = int(m.group(2)), int(m.group(3) or 1)
        if den == 0:
            return None
        return (-num if m.group(1) else num), den

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        parsed = self._parse(action)
        left = self.MAX_TRIES - self.tries
        if parsed is not None and Fraction(*parsed) == self.answer:
            if Fraction(*parsed).denominator == parsed[1]:
                self.done, self.won = True, True
                return "Correct!", 1.0, True, False, {"success": True}
            msg = "That value is right but not in lowest terms."
        elif parsed is None:
            msg = "Write a fraction like 7/12 (or a whole number) inside \\boxed{...}."
        else:
            msg = f"{parsed[0]}/{parsed[1]} is not the right value."
        if left <= 0:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
