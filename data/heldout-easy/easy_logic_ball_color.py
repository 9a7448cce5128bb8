# skill: logical-deduction
# setting: games
# hint: Cross out every colour the clues rule out; the one left is the ball's colour.
import random
import re


class BallColorEnv:
    MAX_TRIES = 3
    COLORS = ["red", "blue", "green", "yellow", "purple"]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.colors = rng.sample(self.COLORS, 3)
        self.answer = rng.choice(self.colors)
        clues = [f"The ball is not {c}." for c in self.colors if c != self.answer]
        self.tries, self.done, self.won = 0, False, False
        obs = (f"A ball is one of these colours: {', '.join(self.colors)}.\n" + " ".join(clues)
               + "\nWhat colour is the ball? Reply with \\boxed{COLOR}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        text = str(action).lower()
        box = re.findall(r"\\boxed\{([^{}]*)\}", text)
        part = box[-1] if box else text
        named = [(part.rfind(c), c) for c in self.colors if c in part]
        pick = max(named)[1] if named else None
        if pick == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = "Name one colour." if pick is None else f"The ball is not {pick}."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" No tries left; it was {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}


# --- solver ---
import re


def solve(observations):
    first = observations[0]
    colors = re.search(r"colours: ([\w, ]+)\.", first).group(1).split(", ")
    out = set(re.findall(r"The ball is not (\w+)\.", first))
    return "\\boxed{%s}" % next(c for c in colors if c not in out)
