# skill: spatial-reasoning
# setting: games
# hint: A point lies inside or on the circle when the squared distance to the center, dx*dx + dy*dy, is at most the radius squared.
import random
import re


class CirclePointsEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        cx, cy = rng.randint(-3, 3), rng.randint(-3, 3)
        radius = rng.randint(3, 6)
        self.answer = 0
        while self.answer < 2:
            points = []
            for _ in range(7):
                points.append((cx + rng.randint(-6, 6), cy + rng.randint(-6, 6)))
            self.answer = 0
            for x, y in points:
                if (x - cx) ** 2 + (y - cy) ** 2 <= radius * radius:
                    self.answer += 1
        listed = ", ".join(f"({x}, {y})" for x, y in points)
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A sensor covers a circle with center ({cx}, {cy}) and radius {radius}. Objects are at "
            f"{listed}. How many are inside the circle or on its edge? "
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
            msg = f"{guess} is too {'few' if guess < self.answer else 'many'}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
