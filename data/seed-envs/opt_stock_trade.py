# skill: optimisation
# setting: games
# hint: Walk through the days in order, remembering the cheapest price seen so far; on each day, check what selling at today's price after buying at that cheapest earlier day would earn, and keep the best.
import random
import re


class StockTradeEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        while True:
            days = rng.randint(6, 9)
            self.prices = [rng.randint(10, 60) for _ in range(days)]
            self.best = max(self.prices[j] - self.prices[i] for i in range(days) for j in range(i + 1, days))
            greedy = max(self.prices[j] for j in range(self.prices.index(min(self.prices)), days)) - min(self.prices)
            if self.best > 0 and (greedy < self.best or rng.random() < 0.3):
                break
        self.tries, self.done, self.won = 0, False, False
        table = ", ".join(f"day {d + 1}: {p}" for d, p in enumerate(self.prices))
        obs = (
            f"A share has these prices: {table}. You may buy one share on one day and sell it on a later day. "
            "Which days give the largest profit? Answer as \\boxed{buy X, sell Y} with day numbers. "
            f"You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        days = [int(n) for n in nums if len(n) < 3]
        if len(nums) != 2 or len(days) != 2 or not all(1 <= d <= len(self.prices) for d in days):
            msg = f"Give a buy day and a sell day between 1 and {len(self.prices)}, like \\boxed{{buy X, sell Y}}."
        elif days[0] >= days[1]:
            msg = "You must sell on a later day than you buy."
        else:
            profit = self.prices[days[1] - 1] - self.prices[days[0] - 1]
            if profit == self.best:
                self.done, self.won = True, True
                return f"Optimal! Profit {profit}.", 1.0, True, False, {"success": True}
            msg = f"That trade makes {profit}; a larger profit is possible."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the best profit was {self.best}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
