# skill: optimisation
# setting: games
# hint: Go from left to right; at the first uncovered spot, place a sensor as far right as it can go while still covering that spot, then repeat.
import random
import re


class SensorCoverEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.reach = rng.randint(2, 5)
        self.spots = sorted(rng.sample(range(0, 60), rng.randint(6, 9)))
        self.best, covered = 0, -1
        for x in self.spots:
            if x > covered:
                self.best += 1
                covered = x + 2 * self.reach
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"Weather stations stand along a road at km {', '.join(map(str, self.spots))}. A radio mast "
            f"reaches every station within {self.reach} km of it, and masts can go anywhere on the road. "
            "What is the fewest masts needed so that every station is reached? "
            f"Put it inside \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 4 else None
        if guess == self.best:
            self.done, self.won = True, True
            return f"Correct! {self.best} masts are enough.", 1.0, True, False, {"success": True}
        if guess is not None and guess < self.best:
            msg = f"{guess} masts cannot reach every station."
        else:
            msg = "That is not the fewest masts that works."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.best}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
