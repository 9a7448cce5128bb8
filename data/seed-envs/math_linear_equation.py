# skill: mathematical-reasoning
# setting: games
# hint: Move every x term to one side and every constant to the other, divide by the coefficient of x, then substitute your value back to check that both sides agree.
import random
import re


class LinearEquationEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.x = rng.randint(-9, 9)
        a = rng.randint(2, 9)
        c = rng.choice([k for k in range(-5, 9) if k not in (a, 1, -1)])
        b = rng.randint(-20, 20)
        d = (a - c) * self.x + b
        self.tries = 0
        self.done = False
        self.won = False
        left = f"{a}x {'+' if b >= 0 else '-'} {abs(b)}"
        right = f"{c}x {'+' if d >= 0 else '-'} {abs(d)}" if c else f"{d}"
        obs = (
            f"Solve for x: {left} = {right}. The solution is a whole number. "
            f"Give x inside \\boxed{{...}}. You have {self.MAX_TRIES} attempts; "
            "after a wrong one you will be told whether it was too high or too low."
        )
        return obs, {}

    @staticmethod
    def _parse(action):
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        if not boxed:
            return None
        nums = re.findall(r"-?\d+", boxed[-1])
        return int(nums[0]) if len(nums) == 1 and len(nums[0]) < 10 else None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        guess = self._parse(action)
        left = self.MAX_TRIES - self.tries
        if guess == self.x:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Put one whole number (it may be negative) inside \\boxed{...}."
        else:
            msg = f"x = {guess} is too {'high' if guess > self.x else 'low'}."
        if left <= 0:
            self.done = True
            return f"{msg} Out of attempts; x = {self.x}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
