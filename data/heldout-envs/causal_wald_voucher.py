# skill: causal-inference
# setting: games
# hint: The voucher was random and changes earnings only through training, so divide its effect on earnings by its effect on training hours.
import random
import re


class WaldVoucherEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        hours0 = rng.randint(2, 10)
        extra = rng.randint(2, 6)
        per_hour = rng.randint(3, 12)
        pay0 = rng.randint(300, 600)
        self.answer = per_hour
        obs = (
            "A city mailed training vouchers to workers picked by lottery. The voucher itself does not change pay; "
            "it only makes people train more.\n"
            f"- Workers with a voucher: {hours0 + extra} training hours on average, weekly pay {pay0 + extra * per_hour} dollars.\n"
            f"- Workers without a voucher: {hours0} training hours on average, weekly pay {pay0} dollars.\n"
            "How many dollars of weekly pay does one extra hour of training cause? "
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
