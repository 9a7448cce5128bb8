# skill: mathematical-reasoning
# setting: games
# hint: The ladder, wall and ground form a right triangle with the ladder as hypotenuse, so height squared = ladder squared - foot distance squared.
import random
import re


class LadderHeightEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        base = rng.choice([(3, 4, 5), (5, 12, 13), (8, 15, 17), (7, 24, 25)])
        k = rng.randint(1, 3)
        foot = base[0] * k
        self.answer = base[1] * k
        ladder = base[2] * k
        if rng.random() < 0.5:
            foot, self.answer = self.answer, foot
        self.tries = 0
        self.done = False
        self.won = False
        obs = (
            f"A {ladder} m ladder leans against a vertical wall. Its foot stands {foot} m "
            f"from the wall on flat ground. How high up the wall, in metres, does the top reach? "
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
            return f"{msg} Out of attempts; the top was {self.answer} m high.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
