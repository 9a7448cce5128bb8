# skill: spatial-reasoning
# setting: games
# hint: The ladder, the wall and the ground form a right triangle with the ladder as the hypotenuse, so the height is the square root of ladder squared minus foot distance squared.
import random
import re


class LadderHeightEnv:
    MAX_TRIES = 2
    TRIPLES = [(3, 4, 5), (5, 12, 13), (8, 15, 17), (7, 24, 25)]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        a, b, c = rng.choice(self.TRIPLES)
        k = rng.randint(1, 4)
        if rng.random() < 0.5:
            a, b = b, a
        foot, self.answer, ladder = a * k, b * k, c * k
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A straight ladder {ladder} dm long leans against a vertical wall on flat ground. Its foot is "
            f"{foot} dm away from the bottom of the wall. How high up the wall, in dm, does the top of the "
            f"ladder touch? Answer with a whole number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
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
            msg = f"{guess} dm is too {'low' if guess < self.answer else 'high'}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
