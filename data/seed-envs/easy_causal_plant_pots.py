# skill: causal-inference
# setting: games
# hint: Only something one pot got and the other did not can explain the growth gap.
import random
import re


class PlantPotsEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.opts = rng.sample(["light", "water", "compost", "music"], 4)
        self.answer = rng.choice(self.opts)
        shared = rng.sample([f for f in self.opts if f != self.answer], rng.randint(1, 3))
        big = rng.sample(shared + [self.answer], len(shared) + 1)
        pots = [(big, rng.randint(8, 14)), (shared, rng.randint(2, 6))]
        rng.shuffle(pots)
        self.tries, self.done, self.won = 0, False, False
        obs = "".join(f"Pot {p} got {', '.join(g)} and grew {h} cm.\n" for p, (g, h) in zip("AB", pots))
        obs += (f"What caused the extra growth? Options: {', '.join(self.opts)}.\n"
                "Reply \\boxed{FACTOR}; 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        part = (re.findall(r"\\boxed\{([^{}]*)\}", str(action)) or [str(action)])[-1]
        found = [w for w in re.findall(r"[a-z]+", part.lower()) if w in self.opts]
        pick = found[-1] if found else None
        if pick == self.answer:
            self.done = self.won = True
            return "Right!", (1.0, 0.6, 0.3)[self.tries - 1], True, False, {"success": True}
        msg = f"It was not {pick}." if pick else "Pick an option."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" Out: {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}
