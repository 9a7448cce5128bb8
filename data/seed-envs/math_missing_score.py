# skill: mathematical-reasoning
# setting: games
# hint: The mean times the number of scores gives the total of all scores; subtract the scores you know from that total to get the missing one.
import random
import re


class MissingScoreEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        count = rng.randint(4, 7)
        known = [rng.randint(50, 100) for _ in range(count - 1)]
        fits = [s for s in range(40, 101) if (sum(known) + s) % count == 0]
        self.answer = rng.choice(fits)
        mean = (sum(known) + self.answer) // count
        self.tries = 0
        self.done = False
        self.won = False
        shown = ", ".join(str(s) for s in known)
        obs = (
            f"A student took {count} tests and the mean score was exactly {mean}. "
            f"The scores of {count - 1} tests were {shown}. What was the last score? "
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
            return f"{msg} Out of attempts; the score was {self.answer}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
