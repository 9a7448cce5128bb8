# skill: pattern-recognition
# setting: games
# hint: See how much the numbers grow along a row and down a column, then start from a known cell and add those steps until you reach the asked cell.
import random
import re


class TableFormulaEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        a, b, c = rng.randint(2, 9), rng.randint(2, 9), rng.randint(0, 20)
        lines = []
        for r in range(1, 4):
            cells = [str(a * r + b * k + c) for k in range(1, 4)]
            lines.append(f"row {r}: " + "  ".join(cells))
        row, col = rng.randint(6, 12), rng.randint(6, 12)
        self.answer = a * row + b * col + c
        self.tries, self.done, self.won = 0, False, False
        obs = (
            "A large table of numbers is filled by one simple rule. Its top-left corner is:\n"
            + "\n".join(lines)
            + f"\nWhat number is in row {row}, column {col}? Put it in \\boxed{{...}}. "
            f"You have {self.MAX_TRIES} attempts."
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
