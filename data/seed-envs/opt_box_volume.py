# skill: optimisation
# setting: games
# hint: Write the volume as x times (length - 2x) times (width - 2x) and try each whole x from 1 up to less than half the shorter side.
import random
import re


class BoxVolumeEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.length = rng.randint(12, 40)
        self.width = rng.randint(10, self.length)
        self.best = 0
        for x in range(1, (self.width + 1) // 2):
            self.best = max(self.best, self._volume(x))
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A card sheet is {self.length} cm by {self.width} cm. You cut an x by x square from each corner "
            "and fold up the sides to make an open box. Which whole x gives the largest volume? "
            f"Put x inside \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def _volume(self, x):
        return x * (self.length - 2 * x) * (self.width - 2 * x)

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        x = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 4 else None
        if x is None or x < 1 or 2 * x >= self.width:
            msg = f"Give one whole number x from 1 to {(self.width - 1) // 2} inside \\boxed{{...}}."
        elif self._volume(x) == self.best:
            self.done, self.won = True, True
            return f"Optimal! The box holds {self.best} cubic cm.", 1.0, True, False, {"success": True}
        else:
            msg = f"With x = {x} the box holds {self._volume(x)} cubic cm; a bigger box is possible."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the largest volume was {self.best}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
