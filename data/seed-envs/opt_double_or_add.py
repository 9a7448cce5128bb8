# skill: optimisation
# setting: games
# hint: Work backwards from the target: if it is even, halve it, if it is odd, subtract one, and count the moves until you reach 1.
import random
import re


class DoubleOrAddEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.target = rng.randint(20, 200)
        self.best, n = 0, self.target
        while n > 1:
            n = n // 2 if n % 2 == 0 else n - 1
            self.best += 1
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A program variable x starts at 1. Each move runs either x = x * 2 or x = x + 1. "
            f"What is the smallest number of moves that makes x equal to {self.target}? "
            f"Put the number inside \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 5 else None
        if guess == self.best:
            self.done, self.won = True, True
            return f"Correct! {self.best} moves is the minimum.", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Give one whole number inside \\boxed{...}."
        elif guess < self.best:
            msg = f"{guess} moves is not enough to reach {self.target}."
        else:
            msg = f"You can reach {self.target} in fewer than {guess} moves."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the minimum was {self.best}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
