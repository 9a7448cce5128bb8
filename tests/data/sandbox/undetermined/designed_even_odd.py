# skill: logical-deduction
# setting: games
# hint: A number is even if it is divisible by 2, and odd if it is divisible by 3.
import random
import re


class EvenOddEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.odd = rng.randint(2, 6)
        self.even = rng.randint(3, 7)
        self.answer = self.odd + self.even
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A number is even if it is divisible by 2, odd if it is divisible by 3. "
            "What is the odd number? "
            f"Give the number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
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
            msg = "Answer with one whole number."
        else:
            msg = f"{guess} is not even."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the number was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
