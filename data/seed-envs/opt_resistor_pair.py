# skill: optimisation
# setting: games
# hint: Series resistances add; for each resistor, find the partner that brings the sum nearest the target.
import random
import re


class ResistorPairEnv:
    STOCK = [10, 15, 22, 33, 47, 56, 68, 82, 100, 150, 220, 330, 470]
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.parts = sorted(rng.sample(self.STOCK, 6))
        self.target = rng.randint(40, 600)
        self.best = 10 ** 6
        for i, a in enumerate(self.parts):
            for b in self.parts[i + 1:]:
                self.best = min(self.best, abs(a + b - self.target))
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"Your drawer holds one resistor of each value: {', '.join(map(str, self.parts))} ohms. "
            f"Connect two different resistors in series to get as close as possible to {self.target} ohms. "
            f"Answer like \\boxed{{47+100}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        pair = [int(n) for n in nums if len(n) < 5]
        if len(pair) != 2 or len(nums) != 2:
            msg = "Name two resistor values."
        elif pair[0] == pair[1] or any(p not in self.parts for p in pair):
            msg = "Use two different resistors you have."
        elif abs(sum(pair) - self.target) == self.best:
            self.done, self.won = True, True
            return f"Optimal! {sum(pair)} ohms.", 1.0, True, False, {"success": True}
        else:
            msg = f"That gives {sum(pair)} ohms; a closer pair exists."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
