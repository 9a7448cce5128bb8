# skill: causal-inference
# setting: games
# hint: Fertilizer changes yield along two paths, directly and through nitrogen; multiply the coefficients along the indirect path, add the direct coefficient, then scale by the size of the change.
import random
import re


class MediatorTotalEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        a, b = rng.randint(2, 5), rng.randint(2, 4)
        c = rng.choice([-3, -2, -1, 1, 2, 3])
        n0, y0 = rng.randint(5, 20), rng.randint(10, 40)
        k = rng.randint(2, 6)
        self.answer = k * (a * b + c)
        self.tries, self.done, self.won = 0, False, False
        sign = "+" if c > 0 else "-"
        obs = (
            "In a field trial, F is kilograms of fertilizer, N is soil nitrogen and Y is crop yield. "
            "The trial found these causal equations:\n"
            f"  N = {n0} + {a}F\n  Y = {y0} + {b}N {sign} {abs(c)}F\n"
            f"If a farmer adds {k} more kilograms of fertilizer, by how much does the yield Y change in total? "
            f"Put the number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"-?\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 8 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Give one whole number in \\boxed{...}." if guess is None else f"It is not {guess}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; it was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
