# skill: pattern-recognition
# setting: games
# hint: Check how each inner number relates to the two numbers just above it and what stays fixed on the left and right edges, then build the next rows yourself.
import random
import re


class NumberTriangleEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        left, right = rng.randint(1, 6), rng.randint(1, 6)
        rows = [[left, right]]
        while len(rows) < 6:
            last = rows[-1]
            inner = [last[i] + last[i + 1] for i in range(len(last) - 1)]
            rows.append([left] + inner + [right])
        pos = rng.randint(2, 6)
        self.answer = rows[5][pos - 1]
        self.tries, self.done, self.won = 0, False, False
        shown = "\n".join(" ".join(map(str, r)) for r in rows[:4])
        obs = (
            f"This number triangle is built row by row with one rule:\n{shown}\n"
            f"What is number {pos} (counting from the left) in row 6? "
            f"Put it in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"-?\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 12 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Put one whole number inside \\boxed{...}." if guess is None else f"{guess} is not right."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
