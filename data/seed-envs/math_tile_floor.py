# skill: mathematical-reasoning
# setting: games
# hint: The largest square tile that fits both sides exactly has a side equal to the greatest common divisor of the two lengths; divide each side by it and multiply.
import random
import re


class TileFloorEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    @staticmethod
    def _gcd(a, b):
        while b:
            a, b = b, a % b
        return a

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        size = rng.randint(2, 12)
        width = size * rng.randint(3, 15)
        length = size * rng.randint(3, 15)
        side = self._gcd(width, length)
        self.answer = (width // side) * (length // side)
        self.tries = 0
        self.done = False
        self.won = False
        obs = (
            f"A floor is {width} cm by {length} cm. It is covered with equal square tiles, "
            "as large as possible, with no tile cut and no gap. How many tiles are needed? "
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
        msg = "Put one whole number inside \\boxed{...}." if guess is None else f"{guess} tiles is wrong."
        if left <= 0:
            self.done = True
            return f"{msg} Out of attempts; {self.answer} tiles were needed.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
