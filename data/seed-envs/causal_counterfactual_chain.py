# skill: causal-inference
# setting: games
# hint: Use the observed values to recover each hidden noise term first; keep those noise terms fixed, change only the intervened variable, and recompute the downstream equations in order.
import random
import re


class CounterfactualChainEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        a, b, c = rng.randint(2, 4), rng.randint(1, 3), rng.choice([-2, -1, 1, 2])
        ux, uy, uz = rng.randint(1, 9), rng.randint(-5, 5), rng.randint(-5, 5)
        x = ux
        y = a * x + uy
        z = b * y + c * x + uz
        new_x = rng.choice([v for v in range(0, 10) if v != x])
        new_y = a * new_x + uy
        self.answer = b * new_y + c * new_x + uz
        self.tries, self.done, self.won = 0, False, False
        cx = f"{'+' if c > 0 else '-'} {abs(c) if abs(c) > 1 else ''}X"
        obs = (
            "A system follows these equations, where U_Y and U_Z are hidden background factors that stay the same "
            f"for this particular case:\n  Y = {a}X + U_Y\n  Z = {b if b > 1 else ''}Y {cx} + U_Z\n"
            f"In one case we observed X = {x}, Y = {y}, Z = {z}. What would Z have been in this same case "
            f"if X had been {new_x} instead? Put the number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
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
        msg = "Put a single whole number inside \\boxed{...}." if guess is None else f"Z would not be {guess}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; Z would have been {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
