# skill: optimisation
# setting: games
# hint: Add up the two legs of each route first, then pick the route with the smallest total time.
import random
import re


class FastestRouteEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.opts = rng.sample(["north", "river", "hill", "park", "bridge"], 4)
        totals = rng.sample(range(5, 17), 4)
        legs = []
        for name, t in zip(self.opts, totals):
            a = rng.randint(1, t - 1)
            legs.append(f"{name} route {a} + {t - a} min")
        self.answer = self.opts[totals.index(min(totals))]
        self.tries, self.done, self.won = 0, False, False
        obs = (f"To reach school you can take: {'; '.join(legs)}.\n"
               f"Which route is fastest in total? Options: {', '.join(self.opts)}.\n"
               "Answer as \\boxed{ROUTE}; 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        chunk = (re.findall(r"\\boxed\{([^{}]*)\}", str(action)) or [str(action)])[-1].lower()
        named = [w for w in re.findall(r"[a-z]+", chunk) if w in self.opts]
        if named and named[-1] == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = f"The {named[-1]} route is slower." if named else "Name one route."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" Out of tries; {self.answer} was fastest." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}
