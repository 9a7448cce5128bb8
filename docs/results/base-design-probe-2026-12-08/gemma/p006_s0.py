# skill: logical-deduction
# setting: games
# hint: Two numbers whose sum is divisible by 2 share the same parity and otherwise their parities differ, so walk the chain of sums from the number you already know.
import random
import re


class ParityCluesEnv:
    NAMES = ["a", "b", "c", "d", "e"]
    MAX_TRIES = 1

    def __init__(self):
        self.reset()

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = boxed[-1].strip().lower() if boxed else ""
        self.done = True
        if guess == self.answer:
            self.won = True
            return "Correct!", 1.0, True, False, {"success": True}
        return f"Wrong: it is {self.answer}.", 0.0, True, False, {"success": False}
