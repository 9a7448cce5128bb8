# skill: optimisation
# setting: games
# hint: Use as many of the large coin as fit without going over, then make up the rest with ones.
import random
import re


class FewestCoinsEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries, self.done, self.won = 0, False, False
        box = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"[0-9]+", box[-1] if box else str(action))
        n = int(nums[-1]) if nums and len(nums[-1]) < 7 else None
        if n == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = "Give a coin count." if n is None else f"{n} coins is too {'many' if n > self.answer else 'few'}."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" Out of tries; the fewest is {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}
