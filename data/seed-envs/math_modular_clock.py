# skill: mathematical-reasoning
# setting: games
# hint: Only the remainder after dividing the hour count by the number of hours on the dial matters; count that many hours from the current one and wrap past the top number.
import random
import re


class ModularClockEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.dial = rng.randint(5, 12)
        self.start = rng.randint(1, self.dial)
        self.hours = rng.randint(self.dial + 1, 80)
        self.forward = rng.random() < 0.7
        shift = self.hours if self.forward else -self.hours
        self.answer = (self.start - 1 + shift) % self.dial + 1
        self.tries = 0
        self.done = False
        self.won = False
        when = "after" if self.forward else "before"
        obs = (
            f"A clock on planet Zorb has {self.dial} hours on its dial, numbered 1 to {self.dial}. "
            f"It now shows {self.start} o'clock. What did or will it show {self.hours} hours {when} now? "
            f"Put the hour number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    @staticmethod
    def _parse(action):
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        if not boxed:
            return None
        nums = re.findall(r"-?\d+", boxed[-1])
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
        if left <= 0:
            self.done = True
            return f"Out of attempts. The clock shows {self.answer}.", 0.0, True, False, {"success": False}
        if guess is None:
            obs = f"Answer with one hour number inside \\boxed{{...}}. Attempts left: {left}."
        elif not 1 <= guess <= self.dial:
            obs = f"The dial only has hours 1 to {self.dial}. Attempts left: {left}."
        else:
            obs = f"{guess} is not right. Attempts left: {left}."
        return obs, 0.0, False, False, {"success": False}
