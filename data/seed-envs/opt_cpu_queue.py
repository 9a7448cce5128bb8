# skill: optimisation
# setting: games
# hint: Every program waits for all programs run before it, so run short ones early.
import random
import re


class CpuQueueEnv:
    NAMES = "ABCDE"
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.times = {n: rng.randint(1, 20) for n in self.NAMES}
        self.best = self._total(sorted(self.NAMES, key=lambda n: self.times[n]))
        self.tries, self.done, self.won = 0, False, False
        listing = ", ".join(f"{n} takes {t} ms" for n, t in self.times.items())
        obs = (
            f"Five programs share one CPU core and run one at a time: {listing}. Choose the run order that "
            "makes the sum of their finish times as small as possible. Write the order in \\boxed{...}, "
            f"for example \\boxed{{A,B,C,D,E}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def _total(self, order):
        clock, total = 0, 0
        for n in order:
            clock += self.times[n]
            total += clock
        return total

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        order = re.findall(r"[A-Z]", boxed[-1].upper()) if boxed else []
        if sorted(order) != list(self.NAMES):
            msg = "List each of the letters A to E exactly once inside \\boxed{...}."
        elif self._total(order) == self.best:
            self.done, self.won = True, True
            return f"Optimal! Sum of finish times {self.best} ms.", 1.0, True, False, {"success": True}
        else:
            msg = f"That order gives a sum of {self._total(order)} ms; a smaller sum is possible."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the best sum was {self.best}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
