# skill: optimisation
# setting: games
# hint: Parts of size 3 give the biggest product per unit; use as many 3s as you can, but replace a leftover 1 by turning a 3+1 into 2+2.
import random
import re


class SplitProductEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.total = rng.randint(7, 20)
        self.best = [0, 1, 2, 3, 4] + [0] * (self.total - 4)
        for n in range(5, self.total + 1):
            self.best[n] = max(self.best[n - 2] * 2, self.best[n - 3] * 3)
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"Split the number {self.total} into positive whole numbers that add up to {self.total}, "
            "so that their product is as large as possible. Write your parts as a sum inside "
            f"\\boxed{{...}}, for example \\boxed{{4+3}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        parts = [int(p) for p in re.findall(r"\d+", boxed[-1])[:30] if len(p) < 4] if boxed else []
        product = 1
        for p in parts:
            product *= p
        if not parts:
            msg = "Write the parts as a sum inside \\boxed{...}."
        elif sum(parts) != self.total:
            msg = f"Those parts add up to {sum(parts)}, not {self.total}."
        elif product == self.best[self.total]:
            self.done, self.won = True, True
            return f"Optimal! The product is {product}.", 1.0, True, False, {"success": True}
        else:
            msg = f"Your product is {product}; a larger product is possible."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the best product was {self.best[self.total]}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
