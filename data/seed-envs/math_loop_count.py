# skill: mathematical-reasoning
# setting: games
# hint: range(start, stop, step) begins at start and stops before reaching stop, so the count is (stop - start) divided by step, rounded up.
import random
import re


class LoopCountEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        start = rng.randint(-5, 20)
        jump = rng.randint(2, 7)
        stop = start + rng.randint(15, 80)
        self.answer = len(range(start, stop, jump))
        self.tries = 0
        self.done = False
        self.won = False
        obs = (
            "How many times does the body of this Python loop run?\n\n"
            f"for i in range({start}, {stop}, {jump}):\n"
            "    total = total + i\n\n"
            f"Give the count in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    @staticmethod
    def _parse(action):
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        if not boxed:
            return None
        nums = re.findall(r"-?\d+", boxed[-1].replace(",", ""))
        return int(nums[0]) if len(nums) == 1 and len(nums[0]) < 10 else None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        guess = self._parse(action)
        left = self.MAX_TRIES - self.tries
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Put one whole number inside \\boxed{...}."
        else:
            msg = f"{guess} is too {'high' if guess > self.answer else 'low'}."
        if left <= 0:
            self.done = True
            return f"{msg} Out of attempts; the loop ran {self.answer} times.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
