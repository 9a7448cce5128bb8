# skill: optimisation
# setting: games
# hint: Keep track of the lowest and highest values that are still possible and always guess the middle of that range; each answer then cuts the possibilities in half.
import random
import re


class BinarySearchGuessEnv:
    MAX_GUESSES = 7

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.top = rng.choice([60, 80, 100, 120])
        self.secret = rng.randint(1, self.top)
        self.guesses, self.done, self.won = 0, False, False
        obs = (
            f"I am thinking of a whole number from 1 to {self.top}. Find it in at most {self.MAX_GUESSES} guesses. "
            "After each guess I say whether my number is higher or lower. Put each guess in \\boxed{...}."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.guesses += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 6 else None
        left = self.MAX_GUESSES - self.guesses
        if guess == self.secret:
            self.done, self.won = True, True
            return f"Yes, it is {self.secret}! Found in {self.guesses} guesses.", 1.0, True, False, {"success": True}
        if guess is None:
            msg = f"Guess one whole number from 1 to {self.top} inside \\boxed{{...}}."
        else:
            msg = f"My number is {'higher' if self.secret > guess else 'lower'} than {guess}."
        if left <= 0:
            self.done = True
            return f"{msg} No guesses left; it was {self.secret}.", 0.0, True, False, {"success": False}
        return f"{msg} Guesses left: {left}.", 0.0, False, False, {"success": False}
