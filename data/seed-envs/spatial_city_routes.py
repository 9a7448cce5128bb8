# skill: spatial-reasoning
# setting: games
# hint: Every shortest route uses the same number of east blocks and north blocks, only in a different order, so count the ways to choose which of the moves go east (a binomial coefficient).
import random
import re


class CityRoutesEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        east, north = rng.randint(1, 5), rng.randint(1, 5)
        x0, y0 = rng.randint(1, 9), rng.randint(1, 9)
        ways = 1
        for i in range(1, east + 1):
            ways = ways * (north + i) // i
        self.answer = ways
        self.tries, self.done, self.won = 0, False, False
        obs = (
            "A city has a perfect grid of streets, with corners named (street, avenue). A courier rides from "
            f"corner ({x0}, {y0}) to corner ({x0 + east}, {y0 + north}), where the first number grows going "
            "east and the second going north. How many different shortest routes along the streets are there? "
            f"Answer in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 5 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Answer with one whole number in \\boxed{...}."
        else:
            msg = f"{guess} is too {'small' if guess < self.answer else 'large'}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; there were {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
