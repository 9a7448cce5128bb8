# skill: causal-inference
# setting: games
# hint: Forcing x cuts the arrow from z into x, so z stays put; only the direct term in y that contains x changes, times the size of the push.
import random
import re


class DoVsSeeEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        a = rng.randint(2, 5)
        b = rng.randint(2, 6)
        c = rng.randint(2, 6)
        k = rng.randint(2, 5)
        self.answer = b * k
        obs = (
            "A lab model links humidity z, mould spores x and cough score y by these rules:\n"
            f"- x = {a} * z + noise\n"
            f"- y = {b} * x + {c} * z + noise\n"
            f"Humid days bring both more spores and more coughing. Now a machine forces the spore level x up by {k}, "
            "without touching humidity. By how much does the cough score y change on average? "
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
