# skill: optimisation
# setting: games
# hint: The cheapest cost to reach a cell is its own cost plus the cheaper of the cell above and the cell to its left; fill the grid row by row.
import random
import re


class GridMinPathEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        n = rng.choice([3, 4])
        self.grid = [[rng.randint(1, 9) for _ in range(n)] for _ in range(n)]
        cost = [[0] * n for _ in range(n)]
        for r in range(n):
            for c in range(n):
                up = cost[r - 1][c] if r > 0 else 999
                left = cost[r][c - 1] if c > 0 else 999
                cost[r][c] = self.grid[r][c] + (min(up, left) if r + c > 0 else 0)
        self.best = cost[-1][-1]
        self.tries, self.done, self.won = 0, False, False
        rows = "\n".join(" ".join(map(str, row)) for row in self.grid)
        obs = (
            "A robot goes from the top-left to the bottom-right cell of this grid, moving only right or down. "
            f"It pays the cost of every cell it visits, both ends included.\n{rows}\n"
            f"What is the smallest total cost? Put it inside \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 5 else None
        if guess == self.best:
            self.done, self.won = True, True
            return f"Correct! The cheapest route costs {self.best}.", 1.0, True, False, {"success": True}
        msg = "That is not the smallest total cost."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the cheapest cost was {self.best}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
