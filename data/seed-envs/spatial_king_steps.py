# skill: spatial-reasoning
# setting: games
# hint: A king moves one square in any direction, including diagonally, so the number of moves is the larger of the file distance and the rank distance.
import random
import re


class KingStepsEnv:
    MAX_TRIES = 2
    FILES = "abcdefgh"

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        while True:
            f1, r1 = rng.randint(0, 7), rng.randint(1, 8)
            f2, r2 = rng.randint(0, 7), rng.randint(1, 8)
            if abs(f1 - f2) != abs(r1 - r2):
                break
        self.answer = max(abs(f1 - f2), abs(r1 - r2))
        start = self.FILES[f1] + str(r1)
        goal = self.FILES[f2] + str(r2)
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A chess king stands on {start} of an empty 8x8 board. What is the smallest number of moves "
            f"it needs to reach {goal}? A king moves one square horizontally, vertically or diagonally. "
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
            msg = f"{guess} moves is too {'few' if guess < self.answer else 'many'}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
