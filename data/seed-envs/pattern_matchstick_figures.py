# skill: pattern-recognition
# setting: games
# hint: See how much the count grows from one figure to the next; if the growth is constant use count = growth times n plus a fixed offset, otherwise check how the growth itself changes.
import random
import re


class MatchstickFiguresEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        a, b = rng.randint(2, 6), rng.randint(1, 4)
        if rng.random() < 0.6:
            counts = [a * n + b for n in range(1, 61)]
        else:
            counts = [n * n + a * n + b for n in range(1, 61)]
        self.n = rng.randint(12, 40)
        self.answer = counts[self.n - 1]
        shown = "\n".join(f"Figure {n}: {counts[n - 1]} matchsticks" for n in range(1, 5))
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A row of figures is built from matchsticks, each figure growing by the same rule:\n{shown}\n"
            f"How many matchsticks does Figure {self.n} need? "
            f"Put the number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 8 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Put a single whole number inside \\boxed{...}."
        else:
            msg = f"Figure {self.n} needs {'more' if self.answer > guess else 'fewer'} than {guess}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; it needs {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
