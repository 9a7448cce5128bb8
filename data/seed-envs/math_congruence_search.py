# skill: mathematical-reasoning
# setting: games
# hint: List the numbers that satisfy the condition with the larger divisor in increasing order, and test each one against the other condition; the first that passes both is the answer.
import random
import re


class CongruenceSearchEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.m1, self.m2 = rng.sample([3, 4, 5, 7], 2)
        self.r1 = rng.randrange(self.m1)
        self.r2 = rng.randrange(self.m2)
        self.answer = next(x for x in range(1, self.m1 * self.m2 + 1)
                           if x % self.m1 == self.r1 and x % self.m2 == self.r2)
        self.tries = 0
        self.done = False
        self.won = False
        obs = (
            f"Find the smallest positive whole number that leaves remainder {self.r1} when divided by {self.m1} "
            f"and remainder {self.r2} when divided by {self.m2}. "
            f"Give the number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    @staticmethod
    def _parse(action):
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        if not boxed:
            return None
        nums = re.findall(r"-?\d+", boxed[-1])
        return int(nums[0]) if len(nums) == 1 and len(nums[0]) < 10 else None

    def _feedback(self, x):
        if x <= 0:
            return f"{x} is not positive."
        checks = [(self.m1, self.r1), (self.m2, self.r2)]
        wrong = [f"{x} divided by {m} leaves {x % m}, not {r}" for m, r in checks if x % m != r]
        if wrong:
            return "; ".join(wrong) + "."
        return f"{x} meets both conditions, but a smaller number does too."

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        guess = self._parse(action)
        left = self.MAX_TRIES - self.tries
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Put a single whole number inside \\boxed{...}." if guess is None else self._feedback(guess)
        if left <= 0:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
