# skill: mathematical-reasoning
# setting: games
# hint: Sort the values first; the median is the middle one, or the mean of the two middle ones when the count is even.
import random
import re


class MedianValueEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        n = rng.choice([5, 6, 7, 8, 9])
        mid = 1
        while mid % 2 == 1:
            vals = [rng.randint(10, 90) for _ in range(n)]
            s = sorted(vals)
            mid = s[n // 2] * 2 if n % 2 == 1 else s[n // 2 - 1] + s[n // 2]
        self.answer = mid // 2
        shown = ", ".join(str(v) for v in vals)
        self.tries = 0
        self.done = False
        self.won = False
        obs = (
            f"A runner logged these daily times in minutes: {shown}. "
            f"What is the median time? "
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
            return f"{msg} Out of attempts; the median was {self.answer}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
