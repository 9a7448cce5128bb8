# skill: pattern-recognition
# setting: games
# hint: Find the short block of colours that repeats and continue it from where the list stops.
import random
import re


class ColorCycleEnv:
    MAX_TRIES = 3
    COLOURS = ["red", "blue", "green", "pink", "gray", "gold"]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        block = rng.sample(self.COLOURS, rng.choice([2, 3]))
        shown = rng.randint(len(block) + 2, 7)
        beads = [block[i % len(block)] for i in range(shown)]
        self.answer = block[shown % len(block)]
        extra = [c for c in self.COLOURS if c not in block]
        self.options = sorted(set(block + [rng.choice(extra)]))
        self.tries, self.done, self.won = 0, False, False
        obs = (f"Beads: {', '.join(beads)}, ?\n"
               f"Which colour comes next? Options: {', '.join(self.options)}.\n"
               "Answer as \\boxed{COLOUR}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        s = str(action).lower().split("\\boxed{")[-1]
        named = [w for w in re.findall(r"[a-z]+", s) if w in self.options]
        pick = named[-1] if named else None
        if pick == self.answer:
            self.done = self.won = True
            return "Correct!", {1: 1.0, 2: 0.6}.get(self.tries, 0.3), True, False, {"success": True}
        self.options = [c for c in self.options if c != pick]
        out = f"Not {pick}. Left: {', '.join(self.options)}." if pick else "Name a colour."
        self.done = self.tries >= self.MAX_TRIES
        return out, 0.0, self.done, False, {"success": False}
