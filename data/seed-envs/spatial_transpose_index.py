# skill: spatial-reasoning
# setting: games
# hint: In row-major order the element at row r and column c of a grid with W columns sits at index r*W + c; transposing swaps the row and column of every element and swaps the grid's height and width.
import random
import re


class TransposeIndexEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        while True:
            rows, cols = rng.randint(2, 6), rng.randint(2, 6)
            r, c = rng.randint(0, rows - 1), rng.randint(0, cols - 1)
            start, self.answer = r * cols + c, c * rows + r
            if start != self.answer:
                break
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A program stores an image with {rows} rows and {cols} columns in a flat list, row by row "
            "(row-major, indices start at 0). One pixel is at flat index "
            f"{start}. The image is transposed (rows become columns), giving {cols} rows and {rows} columns, "
            "and stored row by row again. At which flat index is that pixel now? "
            f"Answer in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 4 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Answer with one index in \\boxed{...}."
        else:
            msg = f"Index {guess} is wrong."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the index was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
