# skill: pattern-recognition
# setting: games
# hint: Find how much each number grows over the one before it, then add that same amount to the last number.
import random
import re


class NextStepEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        start, gap = rng.randint(0, 6), rng.randint(1, 3)
        seq = [start + gap * i for i in range(4)]
        self.answer = start + gap * 4
        self.tries, self.done, self.won = 0, False, False
        obs = ("What number comes next in this list?\n"
               f"{', '.join(map(str, seq))}, ?\n"
               "Answer as \\boxed{NUMBER}. You have 3 tries.")
        return obs, {}

    def _read(self, action):
        msg = str(action)
        pos = msg.rfind("\\boxed{")
        if pos >= 0:
            msg = msg[pos + 7:]
        found = [x for x in re.findall(r"-?\d+", msg) if len(x) <= 6]
        return int(found[-1]) if found else None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        g = self._read(action)
        if g == self.answer:
            self.done = self.won = True
            return "Correct!", (1.0, 0.6, 0.3)[self.tries - 1], True, False, {"success": True}
        if g is None:
            say = "Give a number."
        else:
            say = f"{g} is too {'big' if g > self.answer else 'small'}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{say} The next number was {self.answer}.", 0.0, True, False, {"success": False}
        return f"{say} Try again.", 0.0, False, False, {"success": False}

# --- solver ---
import re


def solve(observations):
    seq = [int(n) for n in re.findall(r"-?\d+", observations[0].splitlines()[1])]
    return "\\boxed{%d}" % (seq[-1] + seq[-1] - seq[-2])
