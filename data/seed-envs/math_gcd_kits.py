# skill: mathematical-reasoning
# setting: games
# hint: Every kit must get the same share of each item, so the largest number of kits is the greatest common divisor of the item counts.
import random
import re


class GcdKitsEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        kit = rng.randint(2, 12)
        a = kit * rng.randint(2, 9)
        b = kit * rng.randint(2, 9)
        while a == b:
            b = kit * rng.randint(2, 9)
        x, y = a, b
        while y:
            x, y = y, x % y
        self.answer = x
        self.tries = 0
        self.done = False
        self.won = False
        obs = (
            f"A teacher packs {a} pencils and {b} erasers into identical kits (each kit has "
            f"the same items) with nothing left over. What is the largest number of kits? "
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
            return f"{msg} Out of attempts; the most kits was {self.answer}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
