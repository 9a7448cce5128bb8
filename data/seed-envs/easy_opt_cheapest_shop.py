# skill: optimisation
# setting: games
# hint: Look at every price in the list and choose the place whose number is the smallest.
import random
import re


class CheapestShopEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.opts = rng.sample(["corner", "market", "kiosk", "bakery", "depot", "stall"], 4)
        item = rng.choice(["milk", "bread", "a pencil", "a battery"])
        prices = rng.sample(range(3, 16), 4)
        self.answer = self.opts[prices.index(min(prices))]
        listed = ", ".join(f"{s} {c} coins" for s, c in zip(self.opts, prices))
        self.tries, self.done, self.won = 0, False, False
        obs = (f"You want to buy {item} as cheaply as possible. Prices: {listed}.\n"
               f"Which shop should you use? Options: {', '.join(self.opts)}.\n"
               "Answer as \\boxed{SHOP}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        box = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        shops = [w for w in re.findall(r"[a-z]+", (box[-1] if box else str(action)).lower()) if w in self.opts]
        pick = shops[-1] if shops else None
        if pick == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = f"{pick} is not the cheapest." if pick else "Name one shop."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" Out of tries: {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}
