# skill: optimisation
# setting: games
# hint: Read every price and keep the smallest one seen so far.
import random
import re


class CheapestTicketEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        sellers = rng.sample(["Bus Co", "Rail One", "Sky Air", "Coach Ltd", "Ferry Plus"], rng.randint(3, 4))
        prices = rng.sample(range(12, 60), len(sellers))
        self.answer = min(prices)
        lines = [f"{s}: {p} dollars" for s, p in zip(sellers, prices)]
        self.tries, self.done, self.won = 0, False, False
        obs = ("Ticket prices to the city:\n" + "\n".join(lines)
               + "\nWhat is the lowest price you can pay? Reply with \\boxed{NUMBER}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        text = str(action)
        box = re.findall(r"\\boxed\{([^{}]*)\}", text)
        found = re.findall(r"-?[0-9]+", box[-1] if box else text)
        n = int(found[-1]) if found and len(found[-1]) < 7 else None
        if n == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = "Reply with one price." if n is None else f"{n} dollars is not the lowest price."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" No tries left; it was {self.answer} dollars." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}


# --- solver ---
import re


def solve(observations):
    return "\\boxed{%d}" % min(int(p) for p in re.findall(r": (\d+) dollars", observations[0]))
