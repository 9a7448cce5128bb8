# skill: pattern-recognition
# setting: games
# hint: Write the number of hydrogen atoms next to the number of carbon atoms for each molecule and find the rule hydrogens = 2 times carbons plus a fixed number.
import random
import re


class HomologousSeriesEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        extra = rng.choice([2, 0, -2])
        start = rng.randint(1, 3) if extra == 2 else rng.randint(2, 4)
        formulas = []
        for n in range(start, start + 3):
            carbon = "C" if n == 1 else f"C{n}"
            formulas.append(f"{carbon}H{2 * n + extra}")
        carbons = rng.randint(8, 20)
        self.answer = 2 * carbons + extra
        self.tries, self.done, self.won = 0, False, False
        obs = (
            "In a chemistry family of molecules each member has one more carbon atom than the last:\n"
            f"{', '.join(formulas)}, ...\n"
            f"How many hydrogen atoms does the member with {carbons} carbon atoms have? "
            f"Put the number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"-?\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 12 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Put one whole number inside \\boxed{...}." if guess is None else f"{guess} is not right."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
