# skill: spatial-reasoning
# setting: games
# hint: Take the difference between each position and your own, ignore the sign, and pick the smallest distance.
import random
import re


class NearestStopEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        home = rng.randint(4, 16)
        gaps = [d * rng.choice([-1, 1]) for d in rng.sample(range(1, 5), 4)]
        self.opts = rng.sample(["library", "bakery", "school", "park", "clinic"], 4)
        self.answer = self.opts[[abs(g) for g in gaps].index(1)]
        where = ", ".join(f"{p} at {home + g}" for p, g in zip(self.opts, gaps))
        self.tries, self.done, self.won = 0, False, False
        obs = (f"Places on a straight road by marker: {where}. You stand at marker {home}.\n"
               f"Which place is closest to you? Options: {', '.join(self.opts)}.\n"
               "Answer as \\boxed{PLACE}; 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        box = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        hit = [w for w in re.findall(r"[a-z]+", (box or [str(action)])[-1].lower()) if w in self.opts]
        go = (hit or [None])[-1]
        if go == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = f"The {go} is farther away." if go else "Name one place."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" Out of tries: {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}
