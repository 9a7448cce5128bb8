# skill: optimisation
# setting: games
# hint: Always merge the two smallest files present, put the result back, and repeat; add up every merge cost.
import random
import re


class FileMergeEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.sizes = [rng.randint(2, 40) for _ in range(rng.randint(4, 6))]
        files, self.best = list(self.sizes), 0
        while len(files) > 1:
            files.sort()
            merged = files[0] + files[1]
            self.best += merged
            files = files[2:] + [merged]
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A program must merge sorted files of sizes {', '.join(map(str, self.sizes))} MB into one file. "
            "It merges two files at a time, and each merge costs the sum of the two sizes. "
            "What is the smallest possible total cost of all merges? Answer with one number in "
            f"\\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        if len(nums) != 1 or len(nums[0]) > 6:
            msg = "Answer with one whole number inside \\boxed{...}."
        elif int(nums[0]) == self.best:
            self.done, self.won = True, True
            return f"Correct! The cheapest total is {self.best}.", 1.0, True, False, {"success": True}
        elif int(nums[0]) < self.best:
            msg = f"No merge order costs as little as {nums[0]}."
        else:
            msg = f"A merge order cheaper than {nums[0]} exists."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.best}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
