# skill: mathematical-reasoning
# setting: games
# hint: Add the rates: each pipe fills 1/a and 1/b of the tank per hour, and the time together is 1 divided by the sum of the rates.
import random
import re


class PipesFillEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        m = rng.randint(1, 4)
        self.answer = m * rng.randint(1, 4)
        a = self.answer * (m + 1)
        b = self.answer * (m + 1) // m
        self.tries = 0
        self.done = False
        self.won = False
        obs = (
            f"Pipe A alone fills a water tank in {a} hours and pipe B alone fills it in {b} hours. "
            f"If both pipes are open together, how many hours does it take to fill the tank? "
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
            return f"{msg} Out of attempts; it took {self.answer} hours.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
