# skill: mathematical-reasoning
# setting: games
# hint: The interior angles of a polygon with n sides add up to (n - 2) times 180 degrees; subtract the known angles from that total.
import random
import re


class PolygonAngleEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        n = rng.randint(4, 7)
        self.answer = 0
        while self.answer < 30 or self.answer > 179:
            angles = [rng.randint(90, 160) for _ in range(n - 1)]
            self.answer = (n - 2) * 180 - sum(angles)
        shown = ", ".join(str(x) for x in angles)
        self.tries = 0
        self.done = False
        self.won = False
        obs = (
            f"A convex polygon has {n} sides. {n - 1} of its interior angles are "
            f"{shown} degrees. How many degrees is the last interior angle? "
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
            return f"{msg} Out of attempts; the last angle was {self.answer} degrees.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
