# skill: spatial-reasoning
# setting: games
# hint: Count how many whole tiles fit along each side using floor division, then multiply the two counts; leftover strips cannot hold a full tile.
import random
import re


class TileFloorEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        width = rng.randint(150, 600)
        length = rng.randint(150, 600)
        tile = rng.choice([20, 25, 30, 40, 50])
        self.answer = (width // tile) * (length // tile)
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A rectangular floor is {width} cm wide and {length} cm long. Square tiles of side {tile} cm "
            "are laid in a grid starting from one corner, edges parallel to the walls, and tiles may not be cut. "
            "How many whole tiles fit on the floor? "
            f"Answer with a whole number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Answer with one whole number in \\boxed{...}."
        else:
            msg = f"{guess} tiles is too {'few' if guess < self.answer else 'many'}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
