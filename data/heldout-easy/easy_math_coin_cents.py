# skill: mathematical-reasoning
# setting: games
# hint: A dime is 10 cents and a nickel is 5: multiply each count by its value and add.
import random
import re


class CoinCentsEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        dimes, nickels = rng.randint(1, 5), rng.randint(1, 5)
        self.answer = 10 * dimes + 5 * nickels
        self.tries, self.done, self.won = 0, False, False
        obs = (f"A purse holds {dimes} dime{'s' * (dimes > 1)} and {nickels} nickel{'s' * (nickels > 1)}.\n"
               "How many cents is that in all? Reply with \\boxed{NUMBER}. You have 3 tries.")
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
        msg = "Reply with one number." if n is None else f"{n} is too {'high' if n > self.answer else 'low'}."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" No tries left; it was {self.answer} cents." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}


# --- solver ---
import re


def solve(observations):
    dimes, nickels = re.search(r"(\d+) dimes? and (\d+) nickels?", observations[0]).groups()
    return "\\boxed{%d}" % (10 * int(dimes) + 5 * int(nickels))
