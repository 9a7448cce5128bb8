# skill: logical-deduction
# setting: games
# hint: Each row and each column holds 1, 2, 3 and 4 exactly once, so collect the numbers already in the marked cell's row and in its column; the one number missing from both is the answer.
import random
import re


class LatinCellEnv:
    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        rows, cols = rng.sample(range(4), 4), rng.sample(range(4), 4)
        syms = rng.sample([1, 2, 3, 4], 4)
        grid = [[syms[(r + c) % 4] for c in cols] for r in rows]
        while True:
            tr, tc = rng.randrange(4), rng.randrange(4)
            shown = [[v if rng.random() < 0.5 else 0 for v in row] for row in grid]
            shown[tr][tc] = 0
            row_vals = {v for v in shown[tr] if v}
            col_vals = {shown[r][tc] for r in range(4) if shown[r][tc]}
            if len(row_vals) < 3 and len(col_vals) < 3 and len(row_vals | col_vals) == 3:
                break
        self.answer = str(grid[tr][tc])
        self.done, self.won = False, False
        text = []
        for r in range(4):
            cells = ["?" if (r, c) == (tr, tc) else str(shown[r][c] or ".") for c in range(4)]
            text.append(" ".join(cells))
        obs = (
            "Fill this 4x4 grid so every row and every column contains 1, 2, 3 and 4 once each.\n"
            "A dot is an empty cell.\n" + "\n".join(text) + "\n"
            "Which number belongs in the cell marked ? Answer like \\boxed{3}. You have one attempt."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.done = True
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = boxed[-1].strip() if boxed else ""
        if guess == self.answer:
            self.won = True
            return "Correct!", 1.0, True, False, {"success": True}
        return f"Wrong. The cell holds {self.answer}.", 0.0, True, False, {"success": False}
