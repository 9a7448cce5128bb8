# skill: mathematical-reasoning
# setting: games
# hint: In Python, a // b is the whole number of times b fits into a and a % b is what is left over; work out both, then combine them.
import random
import re


class DivModEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        a = rng.randint(20, 200)
        b = rng.randint(3, 12)
        c = rng.randint(2, 5)
        self.answer = (a // b) * c + a % b
        self.tries = 0
        self.done = False
        self.won = False
        obs = (
            "What does this Python code print?\n\n"
            f"a = {a}\n"
            f"b = {b}\n"
            f"print((a // b) * {c} + a % b)\n\n"
            f"Give the number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
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
            return f"{msg} Out of attempts; it printed {self.answer}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
