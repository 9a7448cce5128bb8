# skill: pattern-recognition
# setting: games
# hint: The gap between neighbours is the same all along the row, so step from the number just before the blank by that gap.
import random
import re


class MissingMiddleEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        first, gap = rng.randint(0, 5), rng.randint(1, 3)
        row = [first + gap * k for k in range(5)]
        hole = rng.randint(1, 3)
        self.answer = row[hole]
        cells = ["?" if k == hole else str(v) for k, v in enumerate(row)]
        self.tries, self.done, self.won = 0, False, False
        obs = (f"Fence posts are numbered in a pattern: {', '.join(cells)}.\n"
               "Which number belongs where the ? is?\n"
               "Answer as \\boxed{NUMBER}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        chunk = str(action)
        if chunk.count("\\boxed{"):
            chunk = chunk[chunk.rindex("\\boxed{"):]
        vals = [int(v) for v in re.findall(r"-?\d+", chunk) if len(v) < 7]
        g = vals[-1] if vals else None
        if g == self.answer:
            self.done = self.won = True
            return "Correct!", (1.0, 0.6, 0.3)[self.tries - 1], True, False, {"success": True}
        feedback = "Answer with a number."
        if g is not None:
            feedback = f"{g} is {'more' if g > self.answer else 'less'} than the missing number."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            feedback += f" It was {self.answer}."
        return feedback, 0.0, self.done, False, {"success": False}
