# skill: spatial-reasoning
# setting: games
# hint: Use the shoelace formula: half the absolute value of x1(y2 - y3) + x2(y3 - y1) + x3(y1 - y2).
import random
import re


class TriangleAreaEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        while True:
            pts = [(rng.randint(-6, 6), rng.randint(-6, 6)) for _ in range(3)]
            (x1, y1), (x2, y2), (x3, y3) = pts
            twice = abs(x1 * (y2 - y3) + x2 * (y3 - y1) + x3 * (y1 - y2))
            if twice > 0:
                break
        self.twice = twice
        self.answer = str(twice // 2) if twice % 2 == 0 else f"{twice / 2:.1f}"
        names = ", ".join(f"{n}({x}, {y})" for n, (x, y) in zip("ABC", pts))
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A triangle on the coordinate plane has corners {names}. What is its area? "
            "Give the exact number (a decimal like 7.5 is fine) in \\boxed{...}. "
            f"You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+(?:\.\d+)?", boxed[-1]) if boxed else []
        guess = float(nums[0]) if len(nums) == 1 else None
        if guess is not None and abs(guess * 2 - self.twice) < 1e-6:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Answer with one number in \\boxed{...}."
        else:
            msg = f"An area of {nums[0]} is too {'small' if guess * 2 < self.twice else 'large'}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the area was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
