# skill: spatial-reasoning
# setting: games
# hint: Sort the small cubes by position: the 8 corners have three painted faces, edge cubes (not corners) have two, face centres have one, and the hidden inner block of size n-2 has none.
import random
import re


class PaintedCubeEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        n = rng.randint(3, 7)
        self.k = rng.choice([0, 1, 2, 3])
        inner = n - 2
        counts = [inner ** 3, 6 * inner * inner, 12 * inner, 8]
        self.answer = counts[self.k]
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A wooden cube is painted red on all six outside faces and then cut into {n}x{n}x{n} = {n ** 3} "
            f"equal small cubes. How many of the small cubes have exactly {self.k} red face"
            f"{'' if self.k == 1 else 's'}? Answer with a whole number in \\boxed{{...}}. "
            f"You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 5 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Answer with one whole number in \\boxed{...}."
        else:
            msg = f"{guess} is not right."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
