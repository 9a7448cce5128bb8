# skill: optimisation
# setting: games
# hint: Keep choosing the talk that ends earliest among those starting after your last one.
import random
import re


class TalkScheduleEnv:
    NAMES = "ABCDEFG"
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.talks = {}
        for n in self.NAMES:
            start = rng.randint(9, 16)
            self.talks[n] = (start, start + rng.randint(1, 3))
        self.best, free = 0, 0
        for n in sorted(self.NAMES, key=lambda k: self.talks[k][1]):
            if self.talks[n][0] >= free:
                self.best, free = self.best + 1, self.talks[n][1]
        self.tries, self.done, self.won = 0, False, False
        listing = ", ".join(f"{n} {s}-{e}" for n, (s, e) in self.talks.items())
        obs = (
            f"Science fair talks (hours): {listing}. Attend as many as possible with no overlaps "
            f"(one may start as another ends). List them like \\boxed{{A,C}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        letters = set(re.findall(r"[A-G]", boxed[-1].upper())) if boxed else set()
        picked = sorted(letters, key=lambda k: self.talks[k][0])
        if not picked:
            msg = "Name talks by letter."
        elif any(self.talks[a][1] > self.talks[b][0] for a, b in zip(picked, picked[1:])):
            msg = "Those talks overlap."
        elif len(picked) == self.best:
            self.done, self.won = True, True
            return f"Optimal! {self.best} talks.", 1.0, True, False, {"success": True}
        else:
            msg = f"That is {len(picked)} talks; more fit."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
