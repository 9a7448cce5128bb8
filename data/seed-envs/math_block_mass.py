# skill: mathematical-reasoning
# setting: games
# hint: Volume of a box is length times width times height, and mass is density times volume.
import random
import re


class BlockMassEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        metal = rng.choice([("aluminium", 3), ("iron", 8), ("copper", 9), ("lead", 11)])
        l = rng.randint(2, 10)
        w = rng.randint(2, 10)
        h = rng.randint(1, 6)
        self.answer = metal[1] * l * w * h
        self.tries = 0
        self.done = False
        self.won = False
        obs = (
            f"A solid block of {metal[0]} measures {l} cm by {w} cm by {h} cm. "
            f"Take the density of {metal[0]} as {metal[1]} grams per cubic cm. "
            f"What is the mass of the block in grams? "
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
            return f"{msg} Out of attempts; the block weighed {self.answer} grams.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
