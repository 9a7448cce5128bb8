# skill: pattern-recognition
# setting: games
# hint: Check the examples for sign changes, swapped coordinates, or a fixed shift.
import random
import re


class PointTransformEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def _moves(self, p):
        x, y = p
        return {"right": (y, -x), "left": (-y, x), "flip x": (x, -y),
                "flip y": (-x, y), "slide": (x + self.dx, y + self.dy)}

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.dx, self.dy = rng.randint(-5, 5), rng.randint(1, 5)
        while True:
            rule = rng.choice(sorted(self._moves((0, 0))))
            pts = [(rng.randint(-6, 6), rng.randint(-6, 6)) for _ in range(3)]
            a, b = self._moves(pts[0]), self._moves(pts[1])
            fits = [r for r in a if a[r] == a[rule] and b[r] == b[rule]]
            if len(fits) == 1:
                break
        examples = [f"{p} -> {self._moves(p)[rule]}" for p in pts[:2]]
        self.answer = self._moves(pts[2])[rule]
        self.tries, self.done, self.won = 0, False, False
        obs = (
            "One fixed move of the plane acts like this:\n" + "\n".join(examples)
            + f"\nWhere does {pts[2]} go? Put (x, y) in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"-?\d+", boxed[-1]) if boxed else []
        guess = (int(nums[0]), int(nums[1])) if len(nums) == 2 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Put one point (x, y) in \\boxed{...}." if guess is None else f"Not {guess}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
