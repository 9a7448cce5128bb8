# skill: optimisation
# setting: games
# hint: Pair the heaviest person with the lightest if they fit; else the heaviest rides alone.
import random
import re


class BoatTripsEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.limit = rng.choice([100, 120, 150])
        self.people = [rng.randint(30, self.limit - 10) for _ in range(rng.randint(5, 7))]
        left = sorted(self.people)
        self.best = 0
        while left:
            heavy = left.pop()
            if left and left[0] + heavy <= self.limit:
                left.pop(0)
            self.best += 1
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"People weighing {', '.join(map(str, self.people))} kg must cross a river. Each boat trip "
            f"takes at most two people and {self.limit} kg. Use as few trips as possible. "
            f"Answer like \\boxed{{40+70, 90}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        trips = [re.findall(r"\d+", t) for t in boxed[-1].split(",")] if boxed else []
        loads = [[int(w) for w in t] for t in trips if t]
        flat = sorted(w for t in loads for w in t)
        if flat != sorted(self.people):
            msg = "Each person rides exactly once."
        elif any(len(t) > 2 or sum(t) > self.limit for t in loads):
            msg = "A trip is overloaded."
        elif len(loads) == self.best:
            self.done, self.won = True, True
            return f"Optimal! {self.best} trips.", 1.0, True, False, {"success": True}
        else:
            msg = f"{len(loads)} trips; fewer are possible."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
