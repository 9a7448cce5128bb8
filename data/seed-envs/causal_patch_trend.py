# skill: causal-inference
# setting: games
# hint: Errors were already rising along a straight line; extend that line past the patch and subtract the real counts from it.
import random
import re


class PatchTrendEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        base = rng.randint(10, 30)
        slope = rng.randint(2, 6)
        drop = rng.randint(4, 12)
        day = rng.randint(5, 7)
        self.answer = drop
        counts = []
        for t in range(day + 3):
            value = base + slope * t - (drop if t >= day else 0)
            counts.append(str(value))
        obs = (
            f"A web server logged these error counts on days 0 to {day + 2}: {', '.join(counts)}.\n"
            f"A code patch went live at the start of day {day}. Before it, errors grew by the same amount every day, "
            "and that growth continued after the patch. How many errors per day does the patch prevent? "
            f"Answer with \\boxed{{N}}. You have {self.MAX_TRIES} attempts."
        )
        self.tries, self.done, self.won = 0, False, False
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"-?\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if nums else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Put one whole number inside \\boxed{...}." if guess is None else f"{guess} is not right."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
