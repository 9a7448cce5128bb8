# skill: spatial-reasoning
# setting: games
# hint: Check the eight cells around X, diagonals included, and count the live ones.
import random
import re


class LifeNeighborsEnv:
    SIZE = 6
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        grid = [[rng.random() < 0.5 for _ in range(self.SIZE)] for _ in range(self.SIZE)]
        row, col = rng.randint(0, self.SIZE - 1), rng.randint(0, self.SIZE - 1)
        self.answer = 0
        for dr in (-1, 0, 1):
            for dc in (-1, 0, 1):
                r, c = row + dr, col + dc
                if (dr or dc) and 0 <= r < self.SIZE and 0 <= c < self.SIZE and grid[r][c]:
                    self.answer += 1
        lines = []
        for r in range(self.SIZE):
            cells = ["#" if grid[r][c] else "." for c in range(self.SIZE)]
            if r == row:
                cells[col] = "X"
            lines.append(" ".join(cells))
        self.tries, self.done, self.won = 0, False, False
        obs = (
            "A Game of Life board (# live, . dead, X is the target):\n"
            + "\n".join(lines)
            + "\nHow many of the eight cells around X are live? "
            f"Answer with a whole number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Give one number in \\boxed{...}." if guess is None else f"{guess} is wrong."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} The answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
