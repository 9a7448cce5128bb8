# skill: spatial-reasoning
# setting: games
# hint: The overlap is itself a rectangle: its left edge is the larger left edge, its right edge the smaller right edge, and likewise for bottom and top.
import random
import re


class RectOverlapEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def _rect(self, rng):
        x, y = rng.randint(0, 8), rng.randint(0, 8)
        return (x, y, x + rng.randint(2, 7), y + rng.randint(2, 7))

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        while True:
            a, b = self._rect(rng), self._rect(rng)
            w = min(a[2], b[2]) - max(a[0], b[0])
            h = min(a[3], b[3]) - max(a[1], b[1])
            if w > 0 and h > 0 and a != b:
                break
        self.answer = w * h
        self.tries, self.done, self.won = 0, False, False
        obs = (
            "Two windows on a screen are rectangles given by lower-left and upper-right corners: "
            f"window A from {a[:2]} to {a[2:]}, window B from {b[:2]} to {b[2:]}. "
            "What is the area covered by both windows? "
            f"Answer in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 4 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Answer with one number in \\boxed{...}."
        else:
            msg = f"{guess} is too {'small' if guess < self.answer else 'large'}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the area was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
