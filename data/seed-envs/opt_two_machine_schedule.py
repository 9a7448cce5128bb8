# skill: optimisation
# setting: games
# hint: The finish time is at least half of the total work, so look for a split whose two machine loads are as equal as possible; swapping a long job for shorter ones can even them out.
import itertools
import random
import re
import string


class TwoMachineScheduleEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        count = rng.randint(5, 6)
        self.jobs = {string.ascii_uppercase[i]: rng.randint(2, 12) for i in range(count)}
        total = sum(self.jobs.values())
        self.best = min(max(self._load(c), total - self._load(c))
                        for k in range(count + 1) for c in itertools.combinations(self.jobs, k))
        self.tries, self.done, self.won = 0, False, False
        listing = ", ".join(f"{j} takes {d} h" for j, d in self.jobs.items())
        obs = (
            f"Two identical machines start together. Jobs: {listing}. Each job runs on exactly one machine, "
            "and each machine runs its jobs one after another. Choose the jobs for machine 1 (the rest go to "
            "machine 2) so that all work finishes as early as possible. List machine 1's job letters, separated by "
            f"commas, inside \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def _load(self, chosen):
        return sum(self.jobs[j] for j in chosen)

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        chosen = set(re.findall(r"\b[A-Z]\b", boxed[-1].upper())) if boxed else set()
        if not chosen or not chosen <= set(self.jobs):
            msg = f"List job letters from {', '.join(self.jobs)} inside \\boxed{{...}}."
        else:
            one, two = self._load(chosen), sum(self.jobs.values()) - self._load(chosen)
            if max(one, two) == self.best:
                self.done, self.won = True, True
                return f"Optimal! Everything finishes after {self.best} h.", 1.0, True, False, {"success": True}
            msg = f"Machine 1 works {one} h and machine 2 works {two} h, finishing after {max(one, two)} h; an earlier finish is possible."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the best finish was {self.best} h.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
