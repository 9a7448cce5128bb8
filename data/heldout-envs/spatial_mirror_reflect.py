# skill: spatial-reasoning
# setting: games
# hint: Mirror x = a sends x to 2a - x, mirror y = b sends y to 2b - y, and mirror y = x swaps x and y; apply them in order.
import random
import re


class MirrorReflectEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        x, y = rng.randint(-5, 5), rng.randint(-5, 5)
        start = (x, y)
        lines = []
        for _ in range(rng.randint(2, 4)):
            kind, k = rng.choice(["x", "y", "diag"]), rng.randint(-3, 3)
            if kind == "x":
                x = 2 * k - x
                lines.append(f"x = {k}")
            elif kind == "y":
                y = 2 * k - y
                lines.append(f"y = {k}")
            else:
                x, y = y, x
                lines.append("y = x")
        self.answer = (x, y)
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A light spot starts at the point {start}. It is reflected in these mirror lines, one after "
            f"another: {', then '.join(lines)}. Where is the spot at the end? "
            f"Answer as \\boxed{{(x, y)}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"-?\d{1,4}", boxed[-1]) if boxed else []
        guess = (int(nums[0]), int(nums[1])) if len(nums) == 2 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Answer with two whole numbers, like \\boxed{(x, y)}."
        else:
            msg = f"The spot is not at {guess}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; it was at {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
