# skill: causal-inference
# setting: games
# hint: A lamp glows only when both conditions hold, so check the switch and the fuse of each lamp.
import random
import re


class FuseLampEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.opts = rng.sample(["red", "green", "blue", "white"], 4)
        states = [("on", "blown"), ("off", "ok"), ("off", "blown"), ("on", "ok")]
        rng.shuffle(states)
        self.answer = self.opts[states.index(("on", "ok"))]
        rows = [f"{c} lamp: switch {a}, fuse {b}" for c, (a, b) in zip(self.opts, states)]
        self.tries, self.done, self.won = 0, False, False
        obs = ("A lamp glows only if its switch is on AND its fuse is ok.\n" + "; ".join(rows)
               + f".\nWhich lamp glows? Options: {', '.join(self.opts)}. Answer as \\boxed{{COLOR}}; 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        box = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        hits = [w for w in re.findall(r"[a-z]+", (box[-1] if box else str(action)).lower()) if w in self.opts]
        guess = (hits or [None])[-1]
        if guess == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = f"The {guess} lamp is dark." if guess else "Name one lamp colour."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" Out of tries; the {self.answer} one glows." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}
