# skill: spatial-reasoning
# setting: games
# hint: Fill ring by ring: right along the top, down the right side, left along the bottom, up the left side, then move inward.
import random
import re


class SpiralMatrixEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        size = rng.randint(4, 6)
        grid = [[0] * size for _ in range(size)]
        r, c, dr, dc = 0, 0, 0, 1
        for n in range(1, size * size + 1):
            grid[r][c] = n
            nr, nc = r + dr, c + dc
            if not (0 <= nr < size and 0 <= nc < size) or grid[nr][nc]:
                dr, dc = dc, -dr
            r, c = r + dr, c + dc
        row, col = rng.randint(1, size), rng.randint(1, size)
        self.answer = grid[row - 1][col - 1]
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"The numbers 1 to {size * size} are written in a {size}x{size} grid as a clockwise spiral: "
            "1 is in the top-left corner, then they run right along the top row, down the right column, "
            "left along the bottom row, up the left column, and so on. Which number is in "
            f"row {row}, column {col} (counting from 1)? "
            f"Answer in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
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
            return f"{msg} It was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
