# skill: pattern-recognition
# setting: games
# hint: Count how many letters of the alphabet each step jumps, and jump that many past the last letter.
import random
import re
import string


class LetterSkipEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        step = rng.randint(1, 3)
        first = rng.randint(0, 25 - 5 * step)
        letters = [string.ascii_uppercase[first + i * step] for i in range(4)]
        self.answer = string.ascii_uppercase[first + 4 * step]
        self.tries, self.done, self.won = 0, False, False
        obs = (f"Letters: {' '.join(letters)} ?\n"
               "Which letter comes next? Reply with \\boxed{LETTER}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        text = str(action)
        box = re.findall(r"\\boxed\{([^{}]*)\}", text)
        found = re.findall(r"\b([A-Za-z])\b", box[-1] if box else text)
        pick = found[-1].upper() if found else None
        if pick == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = "Reply with one letter." if pick is None else f"{pick} is {'too early' if pick < self.answer else 'too late'} in the alphabet."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" No tries left; it was {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}


# --- solver ---
import re


def solve(observations):
    letters = re.search(r"Letters: ([A-Z ]+) \?", observations[0]).group(1).split()
    return "\\boxed{%s}" % chr(2 * ord(letters[-1]) - ord(letters[-2]))
