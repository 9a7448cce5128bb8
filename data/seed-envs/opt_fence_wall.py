# skill: optimisation
# setting: games
# hint: Each side touching the wall should be about a quarter of the fence and the facing side about half; check nearby whole numbers.
import random
import re


class FenceWallEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.fence = rng.randint(18, 90)
        self.best = max(d * (self.fence - 2 * d) for d in range(1, self.fence // 2 + 1))
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"Build a rectangular pen against a long wall with {self.fence} m of fence. The fence covers the "
            "two sides touching the wall (depth) and the side facing it (length). Using whole metres, "
            "make the area as large as possible. "
            f"Answer as \\boxed{{depth, length}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        if len(nums) != 2 or max(len(n) for n in nums) > 4:
            msg = "Give two whole numbers, like \\boxed{5, 12}."
        else:
            depth, length = int(nums[0]), int(nums[1])
            used, area = 2 * depth + length, depth * length
            if used > self.fence:
                msg = f"That needs {used} m of fence, but you only have {self.fence} m."
            elif area == self.best:
                self.done, self.won = True, True
                return f"Optimal! Area {area} square metres.", 1.0, True, False, {"success": True}
            else:
                msg = f"That pen has area {area}; a larger area is possible."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the best area was {self.best}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
