# skill: mathematical-reasoning
# setting: games
# hint: Sharing equally is dividing: split the total by the number of children.
import random
import re


class ShareCandiesEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        kids, each = rng.randint(2, 5), rng.randint(2, 6)
        self.answer = each
        self.tries, self.done, self.won = 0, False, False
        obs = (f"{kids * each} candies are shared equally among {kids} children, with none left over.\n"
               "How many candies does each child get? Reply with \\boxed{NUMBER}. You have 3 tries.")
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
        tail = f" No tries left; it was {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}


# --- solver ---
import re


def solve(observations):
    total, kids = re.search(r"(\d+) candies are shared equally among (\d+)", observations[0]).groups()
    return "\\boxed{%d}" % (int(total) // int(kids))
