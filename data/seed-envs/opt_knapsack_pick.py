# skill: optimisation
# setting: games
# hint: Value per kilogram is a good first guide, but the best bag is not always the greedy one; compare the few combinations that nearly fill the capacity and keep the one with the highest total value.
import itertools
import random
import re


class KnapsackPickEnv:
    ITEMS = ["lamp", "tent", "rope", "stove", "radio", "camera", "kettle", "blanket"]
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        names = rng.sample(self.ITEMS, 5)
        self.items = {n: (rng.randint(1, 7), rng.randint(2, 15)) for n in names}
        total = sum(w for w, _ in self.items.values())
        self.capacity = rng.randint(total // 3, total // 2 + 1)
        self.best = max(self._value(c) for k in range(6) for c in itertools.combinations(names, k)
                        if self._weight(c) <= self.capacity)
        self.tries, self.done, self.won = 0, False, False
        listing = "\n".join(f"- {n}: weight {w} kg, value {v}" for n, (w, v) in self.items.items())
        obs = (
            f"Pack a bag that holds at most {self.capacity} kg so that the total value is as large as possible.\n"
            f"{listing}\nList the items you pack inside \\boxed{{...}}, separated by commas. "
            f"You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def _weight(self, chosen):
        return sum(self.items[n][0] for n in chosen)

    def _value(self, chosen):
        return sum(self.items[n][1] for n in chosen)

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        words = re.findall(r"[a-z]+", boxed[-1].lower()) if boxed else []
        chosen = sorted({w for w in words if w in self.items})
        if not chosen:
            msg = "Name at least one of the listed items inside \\boxed{...}."
        elif self._weight(chosen) > self.capacity:
            msg = f"Too heavy: that bag weighs {self._weight(chosen)} kg, the limit is {self.capacity} kg."
        elif self._value(chosen) == self.best:
            self.done, self.won = True, True
            return f"Optimal! Total value {self.best}.", 1.0, True, False, {"success": True}
        else:
            msg = f"That bag is worth {self._value(chosen)} ({self._weight(chosen)} kg); a more valuable bag exists."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the best value was {self.best}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
