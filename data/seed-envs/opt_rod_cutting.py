# skill: optimisation
# setting: games
# hint: Best income for a length is the best piece price plus the best income for the rest; build up from short lengths.
import random
import re


class RodCuttingEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.pay = {1: rng.randint(1, 3)}
        for k in range(2, 5):
            self.pay[k] = self.pay[k - 1] + rng.randint(1, 4)
        self.length = rng.randint(6, 12)
        best = [0] * (self.length + 1)
        for n in range(1, self.length + 1):
            best[n] = max(self.pay[k] + best[n - k] for k in self.pay if k <= n)
        self.best = best[-1]
        self.tries, self.done, self.won = 0, False, False
        listing = ", ".join(f"{k} m pays {v}" for k, v in self.pay.items())
        obs = (
            f"Cut a {self.length} m wire into pieces for the most coins. Prices: {listing} coins. "
            "Write the lengths as a sum in \\boxed{...}, for example \\boxed{3+2+1}. "
            f"You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        parts = [int(p) for p in re.findall(r"\d+", boxed[-1])[:30] if len(p) < 3] if boxed else []
        money = sum(self.pay.get(p, 0) for p in parts)
        if sum(parts) != self.length or any(p not in self.pay for p in parts):
            msg = f"Use pieces of 1 to 4 m that add up to {self.length} m."
        elif money == self.best:
            self.done, self.won = True, True
            return f"Optimal! {self.best} coins.", 1.0, True, False, {"success": True}
        else:
            msg = f"That earns {money}; more is possible."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; best was {self.best}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
