# skill: mathematical-reasoning
# setting: games
# hint: The order of members does not matter, so count combinations: n choose k = n! / (k! (n - k)!).
import random
import re


class CommitteeChooseEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        n = rng.randint(5, 12)
        k = rng.randint(2, 4)
        self.answer = 1
        for i in range(k):
            self.answer = self.answer * (n - i) // (i + 1)
        self.tries = 0
        self.done = False
        self.won = False
        obs = (
            f"A club has {n} members. In how many different ways can it pick a committee "
            f"of {k} members, if the order of picking does not matter? "
            f"Give the number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
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
            return f"{msg} Out of attempts; there were {self.answer} ways.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
