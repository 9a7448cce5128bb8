# skill: optimisation
# setting: games
# hint: Sort the numbers first; the closest pair is always two neighbours in sorted order, so only compare each value with the next one.
import random
import re


class ClosestReadingsEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.values = rng.sample(range(100, 999), rng.randint(6, 9))
        ordered = sorted(self.values)
        self.best = min(ordered[i + 1] - ordered[i] for i in range(len(ordered) - 1))
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A thermometer log holds these readings (in tenths of a degree): {', '.join(map(str, self.values))}. "
            "Two of them are closer together than any other pair. Name those two readings inside "
            f"\\boxed{{...}}, for example \\boxed{{310, 318}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        pair = [int(n) for n in nums if len(n) < 5]
        if len(pair) != 2 or pair[0] == pair[1] or any(p not in self.values for p in pair):
            msg = "Name two different readings from the log inside \\boxed{...}."
        elif abs(pair[0] - pair[1]) == self.best:
            self.done, self.won = True, True
            return f"Correct! They differ by only {self.best}.", 1.0, True, False, {"success": True}
        else:
            msg = f"Those differ by {abs(pair[0] - pair[1])}; a closer pair exists."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the smallest gap was {self.best}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
