# skill: mathematical-reasoning
# setting: games
# hint: Resistors in series add up to one total resistance, and the current is the voltage divided by that total (I = V / R).
import random
import re


class OhmsLawEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        r1 = rng.randint(1, 20)
        r2 = rng.randint(1, 20)
        r3 = rng.randint(1, 20)
        self.answer = rng.randint(1, 6)
        volts = self.answer * (r1 + r2 + r3)
        self.tries = 0
        self.done = False
        self.won = False
        obs = (
            f"A {volts} volt battery drives a circuit with three resistors in series: "
            f"{r1} ohms, {r2} ohms and {r3} ohms. What current flows, in amperes? "
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
            return f"{msg} Out of attempts; the current was {self.answer} amperes.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
