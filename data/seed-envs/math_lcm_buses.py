# skill: mathematical-reasoning
# setting: games
# hint: Both buses are at the stop together again after a number of minutes that is a multiple of both gaps, so find the least common multiple.
import random
import re


class LcmBusesEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        a = rng.randint(4, 20)
        b = rng.randint(4, 20)
        while a == b:
            b = rng.randint(4, 20)
        x, y = a, b
        while y:
            x, y = y, x % y
        self.answer = a * b // x
        self.tries = 0
        self.done = False
        self.won = False
        obs = (
            f"Bus A leaves the station every {a} minutes and bus B every {b} minutes. "
            f"Both leave together at 8:00. After how many minutes do they next leave together? "
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
            return f"{msg} Out of attempts; they meet again after {self.answer} minutes.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
