# skill: mathematical-reasoning
# setting: games
# hint: Use F = C * 9 / 5 + 32 to go from Celsius to Fahrenheit, and C = (F - 32) * 5 / 9 to go back.
import random
import re


class CelsiusConvertEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        c = 5 * rng.randint(-8, 20)
        f = c * 9 // 5 + 32
        if rng.random() < 0.5:
            text = f"A lab thermometer reads {c} degrees Celsius. What is this in degrees Fahrenheit? "
            self.answer = f
        else:
            text = f"A weather report says {f} degrees Fahrenheit. What is this in degrees Celsius? "
            self.answer = c
        self.tries = 0
        self.done = False
        self.won = False
        obs = (
            text +
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
            return f"{msg} Out of attempts; the answer was {self.answer} degrees.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
