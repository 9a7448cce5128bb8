# skill: mathematical-reasoning
# setting: games
# hint: Take the percentage of the original price first and subtract it, then subtract the coupon from that sale price, not from the original.
import random
import re


class SalePriceEnv:
    MAX_TRIES = 2
    ITEMS = ["jacket", "lamp", "backpack", "kettle", "bicycle helmet", "desk chair"]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        item = rng.choice(self.ITEMS)
        price = 20 * rng.randint(2, 20)
        percent = 5 * rng.randint(1, 10)
        coupon = rng.randint(2, 15)
        self.answer = price - price * percent // 100 - coupon
        self.tries = 0
        self.done = False
        self.won = False
        obs = (
            f"A {item} costs ${price}. The shop marks it down by {percent}%, and then a coupon "
            f"takes ${coupon} off the sale price. How many dollars do you pay? "
            f"Give the number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    @staticmethod
    def _parse(action):
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        if not boxed:
            return None
        nums = re.findall(r"-?\d+", boxed[-1].replace(",", "").replace("$", ""))
        return int(nums[0]) if len(nums) == 1 and len(nums[0]) < 10 else None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        guess = self._parse(action)
        left = self.MAX_TRIES - self.tries
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Put one whole number of dollars inside \\boxed{...}."
        else:
            msg = f"${guess} is not the price you pay."
        if left <= 0:
            self.done = True
            return f"{msg} Out of attempts; you pay ${self.answer}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
