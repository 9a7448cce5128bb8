# skill: optimisation
# setting: games
# hint: Put the largest digit first, then the next largest, and so on.
import random
import re


class BiggestNumberEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        digits = rng.sample(range(1, 10), 3)
        self.answer = int("".join(map(str, sorted(digits, reverse=True))))
        self.tries, self.done, self.won = 0, False, False
        obs = (f"Digit cards: {', '.join(map(str, digits))}.\n"
               "Use each card once to make the largest three-digit number. Reply with \\boxed{NUMBER}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        text = str(action)
        box = re.findall(r"\\boxed\{([^{}]*)\}", text)
        found = re.findall(r"[0-9]+", box[-1] if box else text)
        n = int(found[-1]) if found and len(found[-1]) < 7 else None
        if n == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = "Reply with one number." if n is None else f"{n} is not the largest you can make."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" No tries left; it was {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}


# --- solver ---
import re


def solve(observations):
    digits = re.search(r"Digit cards: ([\d, ]+)\.", observations[0]).group(1).split(", ")
    return "\\boxed{%s}" % "".join(sorted(digits, reverse=True))
