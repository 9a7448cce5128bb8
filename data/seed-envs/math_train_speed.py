# skill: mathematical-reasoning
# setting: games
# hint: Speed is distance divided by time; turn the minutes into a fraction of an hour first, or multiply the distance per minute by sixty.
import random
import re


class TrainSpeedEnv:
    MAX_TRIES = 2
    VEHICLES = ["train", "bus", "ferry", "cyclist", "delivery van"]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        vehicle = rng.choice(self.VEHICLES)
        self.answer = 6 * rng.randint(3, 25)
        minutes = 10 * rng.randint(1, 9)
        distance = self.answer * minutes // 60
        self.tries = 0
        self.done = False
        self.won = False
        obs = (
            f"A {vehicle} moving at a steady speed covers {distance} km in {minutes} minutes. "
            "What is its speed in kilometres per hour? "
            f"Give the number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    @staticmethod
    def _parse(action):
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        if not boxed:
            return None
        nums = re.findall(r"\d+", boxed[-1].replace(",", ""))
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
            msg = f"{guess} km/h is too {'fast' if guess > self.answer else 'slow'}."
        if left <= 0:
            self.done = True
            return f"{msg} Out of attempts; the speed was {self.answer} km/h.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
