# skill: optimisation
# setting: games
# hint: Keep a running sum, reset it to zero whenever it drops below zero, and remember the largest running sum you ever saw.
import random
import re


class BestStretchEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.changes = [rng.randint(-9, 9) for _ in range(rng.randint(7, 10))]
        self.changes[rng.randrange(len(self.changes))] = rng.randint(1, 9)
        self.best, run = 0, 0
        for c in self.changes:
            run = max(0, run + c)
            self.best = max(self.best, run)
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A lab records the daily change in a plant's height (mm): {', '.join(map(str, self.changes))}. "
            "Pick a run of consecutive days whose total change is as large as possible. "
            "Give that largest total inside \\boxed{...}. "
            f"You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"-?\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 6 else None
        if guess == self.best:
            self.done, self.won = True, True
            return f"Correct! The best run totals {self.best} mm.", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Give one whole number inside \\boxed{...}."
        elif guess > self.best:
            msg = f"No run of days adds up to {guess} or more."
        else:
            msg = f"A run with a larger total than {guess} exists."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the best total was {self.best}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
