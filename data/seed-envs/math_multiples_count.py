# skill: mathematical-reasoning
# setting: games
# hint: Count multiples of each number with N // a and N // b, then subtract the numbers counted twice, the multiples of their least common multiple.
import random
import re


class MultiplesCountEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        a = rng.choice([2, 3, 4, 5, 6, 7])
        b = rng.choice([3, 5, 7, 8, 9, 10])
        while a == b:
            b = rng.choice([3, 5, 7, 8, 9, 10])
        top = rng.randint(30, 150)
        self.answer = 0
        for i in range(1, top + 1):
            if i % a == 0 or i % b == 0:
                self.answer += 1
        self.tries = 0
        self.done = False
        self.won = False
        obs = (
            f"How many whole numbers from 1 to {top} (inclusive) are divisible by {a} or by {b} "
            f"(or both)? "
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
            return f"{msg} Out of attempts; there were {self.answer} such numbers.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
