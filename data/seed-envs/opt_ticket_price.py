# skill: optimisation
# setting: games
# hint: Revenue is price times visitors, a downward parabola in the price; compute it for prices near the middle of the range and pick the largest.
import random
import re


class TicketPriceEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.drop = rng.randint(2, 9)
        self.base = self.drop * rng.randint(12, 30) + rng.randint(0, self.drop - 1)
        self.top = self.base // self.drop
        self.best = max(self._revenue(p) for p in range(1, self.top + 1))
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A science museum sells tickets. At a price of p dollars, {self.base} - {self.drop}*p people come "
            f"(p is a whole number from 1 to {self.top}). Which price p brings in the most money? "
            f"Put p inside \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def _revenue(self, p):
        return p * (self.base - self.drop * p)

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        p = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 5 else None
        if p is None or p < 1 or p > self.top:
            msg = f"Give one whole price from 1 to {self.top} inside \\boxed{{...}}."
        elif self._revenue(p) == self.best:
            self.done, self.won = True, True
            return f"Optimal! Revenue {self.best} dollars.", 1.0, True, False, {"success": True}
        else:
            msg = f"At {p} dollars the revenue is {self._revenue(p)}; another price earns more."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the best revenue was {self.best}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
