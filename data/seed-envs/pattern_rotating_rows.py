# skill: pattern-recognition
# setting: games
# hint: Find how many places each row is shifted compared with the row above, then keep shifting by that amount, wrapping letters from the end back to the front.
import random
import re


class RotatingRowsEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        first = rng.sample("ABCDE", 5)
        k = rng.randint(1, 4)
        target = rng.randint(6, 10)
        rows = []
        for r in range(target):
            s = (r * k) % 5
            rows.append("".join(first[-s:] + first[:-s]) if s else "".join(first))
        self.answer = rows[-1]
        self.tries, self.done, self.won = 0, False, False
        shown = "\n".join(f"row {i + 1}: {row}" for i, row in enumerate(rows[:4]))
        obs = (
            f"Each row of this pattern is made from the row above by the same move:\n{shown}\n"
            f"What is row {target}? Put its five letters in \\boxed{{...}}. "
            f"You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = re.sub(r"[^A-Z]", "", boxed[-1].upper()) if boxed else ""
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Put your answer inside \\boxed{...}." if not guess else f"{guess} is not right."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
