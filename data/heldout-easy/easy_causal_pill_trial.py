# skill: causal-inference
# setting: games
# hint: Compare the patients: only one pill is followed by the fever going away every time.
import random
import re


class PillTrialEnv:
    MAX_TRIES = 3
    COLORS = ["red", "blue", "green", "white", "yellow"]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.pills = rng.sample(self.COLORS, 3)
        self.answer = rng.choice(self.pills)
        rows = []
        for name, pill in zip(rng.sample(["Ann", "Bo", "Cy", "Dee", "Eli", "Fay"], 3), self.pills):
            rows.append(f"{name} took the {pill} pill; the fever {'went away' if pill == self.answer else 'stayed'}.")
        self.tries, self.done, self.won = 0, False, False
        obs = ("Three patients with the same fever each took one pill.\n" + "\n".join(rows)
               + f"\nWhich pill cures the fever: {', '.join(self.pills)}? Reply with \\boxed{{COLOR}}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        text = str(action).lower()
        box = re.findall(r"\\boxed\{([^{}]*)\}", text)
        part = box[-1] if box else text
        named = [(part.rfind(c), c) for c in self.pills if c in part]
        pick = max(named)[1] if named else None
        if pick == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = "Name one pill colour." if pick is None else f"The {pick} pill does not cure it."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" No tries left; it was the {self.answer} pill." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}


# --- solver ---
import re


def solve(observations):
    return "\\boxed{%s}" % re.search(r"the (\w+) pill; the fever went away", observations[0]).group(1)
