# skill: mathematical-reasoning
# setting: games
# hint: Find the common difference, work out the last term, then use sum = number of terms times (first term + last term) / two.
import random
import re


class ArithmeticSeriesEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        first = rng.randint(-10, 20)
        diff = rng.choice([k for k in range(-4, 8) if k != 0])
        self.n = rng.randint(6, 15)
        self.terms = [first + diff * i for i in range(self.n)]
        self.answer = sum(self.terms)
        self.tries = 0
        self.done = False
        self.won = False
        shown = ", ".join(str(t) for t in self.terms[:3])
        obs = (
            f"An arithmetic sequence starts {shown}, ... and has {self.n} terms in total. "
            f"What is the sum of all {self.n} terms? Give the number in \\boxed{{...}}. "
            f"You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    @staticmethod
    def _parse(action):
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        if not boxed:
            return None
        nums = re.findall(r"-?\d+", boxed[-1].replace(",", ""))
        return int(nums[0]) if len(nums) == 1 and len(nums[0]) < 10 else None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        guess = self._parse(action)
        left = self.MAX_TRIES - self.tries
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Put one whole number inside \\boxed{...}."
        else:
            msg = f"{guess} is too {'high' if guess > self.answer else 'low'}."
        if left <= 0:
            self.done = True
            return f"{msg} Out of attempts; the sum was {self.answer}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
