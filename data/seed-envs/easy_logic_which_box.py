# skill: logical-deduction
# setting: games
# hint: Cross out every box that a clue rules out; the box that is left over must hold it.
import random
import re


class WhichBoxEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.options = rng.sample(["red", "blue", "green", "yellow", "white", "black"], 3)
        self.answer = rng.choice(self.options)
        thing = rng.choice(["key", "coin", "ring", "chip"])
        clues = " ".join(f"The {thing} is not in the {c} box." for c in self.options if c != self.answer)
        self.tries, self.done, self.won = 0, False, False
        obs = (f"There are three boxes: {', '.join(self.options)}.\n{clues}\n"
               f"Which box holds the {thing}? Answer as \\boxed{{COLOUR}}. You have 3 tries.")
        return obs, {}

    def _colour(self, action):
        s = str(action).lower()
        if "\\boxed{" in s:
            s = s[s.rindex("\\boxed{") + 7:]
        seen = [w for w in re.findall(r"[a-z]+", s) if w in self.options]
        return seen[-1] if seen else None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        c = self._colour(action)
        if c == self.answer:
            self.done = self.won = True
            return "Correct!", {1: 1.0, 2: 0.6, 3: 0.3}[self.tries], True, False, {"success": True}
        reply = f"The {c} box is empty." if c else "Name one box colour."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{reply} It was the {self.answer} box.", 0.0, True, False, {"success": False}
        return reply, 0.0, False, False, {"success": False}
