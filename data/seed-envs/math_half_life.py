# skill: mathematical-reasoning
# setting: games
# hint: Divide the elapsed time by the half-life to count the halvings, then halve the starting mass that many times.
import random
import re


class HalfLifeEnv:
    MAX_TRIES = 2
    ISOTOPES = ["tracer A", "tracer B", "isotope Q", "isotope Z", "isotope K"]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        name = rng.choice(self.ISOTOPES)
        half = rng.randint(2, 12)
        halvings = rng.randint(1, 5)
        self.answer = rng.randint(1, 15)
        start = self.answer * 2 ** halvings
        self.tries = 0
        self.done = False
        self.won = False
        obs = (
            f"A lab sample holds {start} grams of {name}, which has a half-life of {half} hours. "
            f"How many grams of {name} are left after {half * halvings} hours? "
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
            msg = "Put one whole number of grams inside \\boxed{...}."
        else:
            msg = f"{guess} grams is too {'much' if guess > self.answer else 'little'}."
        if left <= 0:
            self.done = True
            return f"{msg} Out of attempts; {self.answer} grams were left.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
