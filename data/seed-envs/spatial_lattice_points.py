# skill: spatial-reasoning
# setting: games
# hint: The number of integer points on a segment, counting both ends, is the greatest common divisor of the x and y differences plus one.
import random
import re


class LatticePointsEnv:
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
        x1, y1 = rng.randint(-10, 10), rng.randint(-10, 10)
        step = rng.randint(2, 6)
        dx, dy = rng.randint(-3, 3) * step, rng.randint(1, 3) * step
        x2, y2 = x1 + dx, y1 + dy
        self.answer = self._gcd(abs(dx), abs(dy)) + 1
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A straight segment is drawn from ({x1}, {y1}) to ({x2}, {y2}). How many points with whole-number "
            "coordinates lie on the segment, counting both endpoints? "
            f"Answer with a whole number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Answer with one whole number in \\boxed{...}."
        else:
            msg = f"{guess} points is too {'few' if guess < self.answer else 'many'}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
