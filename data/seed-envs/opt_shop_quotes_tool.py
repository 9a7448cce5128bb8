# skill: optimisation
# setting: tool-use
# hint: Quote every shop, add delivery to price times quantity, and buy where the total is lowest.
import json
import random
import re


class ShopQuotesEnv:
    SHOPS = ["Alba", "Birch", "Cove", "Dale"]
    MAX_STEPS = 8

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.qty = rng.randint(3, 20)
        self.quotes = {s: (rng.randint(2, 12), rng.randint(0, 30)) for s in self.SHOPS}
        self.best = min(self._cost(s) for s in self.SHOPS)
        self.steps, self.done, self.won = 0, False, False
        obs = (
            f"Buy {self.qty} packs of paper for the lowest total cost.\n"
            "Tools (reply with one JSON call per turn: {\"name\": ..., \"arguments\": {...}}):\n"
            "- quote {\"shop\": name} : price per pack and delivery\n"
            "- buy {\"shop\": name} : buy all there (ends the task)\n"
            f"Shops: {', '.join(self.SHOPS)}. You have {self.MAX_STEPS} turns."
        )
        return obs, {}

    def _cost(self, shop):
        price, fee = self.quotes[shop]
        return price * self.qty + fee

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        try:
            call = json.loads(re.search(r"\{.*\}", str(action), re.S).group(0))
            name, shop = call["name"], str(call["arguments"]["shop"]).title()
        except Exception:
            name, shop = None, ""
        if name not in ("quote", "buy") or shop not in self.quotes:
            obs = "Call quote or buy with a listed shop."
        elif name == "buy":
            self.done, self.won = True, self._cost(shop) == self.best
            obs = "Cheapest total!" if self.won else f"The best total was {self.best}."
            return obs, float(self.won), True, False, {"success": self.won}
        else:
            obs = "{}: {} per pack, delivery {}.".format(shop, *self.quotes[shop])
        self.done = self.steps >= self.MAX_STEPS
        return obs + " Out of turns." * self.done, 0.0, False, self.done, {"success": False}
