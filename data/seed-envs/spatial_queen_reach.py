# skill: spatial-reasoning
# setting: games
# hint: Walk outward from the queen in each of the eight directions and count squares until you leave the board; add the eight counts.
import random
import re


class QueenReachEnv:
    MAX_TRIES = 2
    DIRS = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1)]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        size = rng.randint(5, 8)
        row, col = rng.randint(1, size), rng.randint(1, size)
        self.answer = 0
        for dr, dc in self.DIRS:
            r, c = row + dr, col + dc
            while 1 <= r <= size and 1 <= c <= size:
                self.answer += 1
                r, c = r + dr, c + dc
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A queen stands alone on an empty {size}x{size} board at row {row}, column {col} "
            "(rows and columns are numbered from 1). A queen moves any distance along a row, a column or a diagonal. "
            "How many squares can it reach in one move? "
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
        if guess is None:
            msg = "Answer with one whole number in \\boxed{...}."
        else:
            msg = f"{guess} squares is too {'few' if guess < self.answer else 'many'}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
