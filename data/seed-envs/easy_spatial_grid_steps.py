# skill: spatial-reasoning
# setting: games
# hint: Count the gap between the x values and the gap between the y values separately, then add the two gaps.
import random
import re


class GridStepsEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        x1, y1 = rng.randint(0, 6), rng.randint(0, 6)
        x2, y2 = rng.randint(0, 6), rng.randint(0, 6)
        if (x1, y1) == (x2, y2):
            x2 = (x2 + 3) % 7
        self.answer = abs(x1 - x2) + abs(y1 - y2)
        bot = rng.choice(["robot", "rover", "rook"])
        self.tries, self.done, self.won = 0, False, False
        obs = (f"A {bot} on a grid moves one square per step: up, down, left or right (no diagonals).\n"
               f"It is at ({x1}, {y1}) and must reach ({x2}, {y2}). What is the fewest number of steps?\n"
               "Answer as \\boxed{NUMBER}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        part = (re.findall(r"\\boxed\{([^{}]*)\}", str(action)) or [str(action)])[-1]
        nums = re.findall(r"[0-9]+", part)
        k = int(nums[-1]) if nums and len(nums[-1]) < 7 else None
        if k == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = "Give a number." if k is None else f"{k} steps is too {'many' if k > self.answer else 'few'}."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" Out of tries; it was {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}
