# skill: mathematical-reasoning
# setting: games
# hint: Start at the amount in the jar and count down by one for every cookie that was eaten.
import random
import re


class CookiesLeftEnv:
    MAX_TRIES = 3
    CREDIT = {1: 1.0, 2: 0.6, 3: 0.3}

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        total = rng.randint(4, 20)
        eaten = rng.randint(1, min(9, total - 1))
        who = rng.choice(["Dad", "Nora", "Ben", "Kim"])
        self.answer, self.tries, self.done, self.won = total - eaten, 0, False, False
        obs = (f"A jar holds {total} cookies. {who} eats {eaten} of them.\n"
               "How many cookies are left in the jar?\n"
               "Reply as \\boxed{NUMBER}. You get 3 tries.")
        return obs, {}

    def _number(self, action):
        text = str(action)
        cut = text.rfind("\\boxed{")
        if cut >= 0:
            text = text[cut + 7:]
        hits = re.findall(r"-?\d+", text)
        return int(hits[-1]) if hits and len(hits[-1]) <= 5 else None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        n = self._number(action)
        if n == self.answer:
            self.done = self.won = True
            return "Correct!", self.CREDIT[self.tries], True, False, {"success": True}
        fb = "Need a number." if n is None else ("Too many." if n > self.answer else "Too few.")
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{fb} The answer was {self.answer}.", 0.0, True, False, {"success": False}
        return f"{fb} Tries left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
