# skill: optimisation
# setting: games
# hint: Compare the first letter with the last, the second with the second-to-last, and so on; every mismatched pair needs exactly one change.
import random
import re


class PalindromeEditsEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        size = rng.randint(6, 11)
        self.best = 0
        while self.best == 0:
            self.word = "".join(rng.choice("acgt") for _ in range(size))
            for i in range(size // 2):
                if self.word[i] != self.word[size - 1 - i]:
                    self.best += 1
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A DNA string reads {self.word}. One edit replaces a single letter with another letter. "
            "What is the fewest edits that turn it into a palindrome (the same read forwards and "
            f"backwards)? Put the number inside \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 4 else None
        if guess == self.best:
            self.done, self.won = True, True
            return f"Correct! {self.best} edits is the minimum.", 1.0, True, False, {"success": True}
        if guess is not None and guess < self.best:
            msg = f"{guess} edits are not enough."
        else:
            msg = "Fewer edits would do."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.best}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
