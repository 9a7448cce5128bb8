# skill: mathematical-reasoning
# setting: games
# hint: Start from the first amount and count up by one for each extra fruit picked.
import random
import re


class AddApplesEnv:
    MAX_TRIES = 3
    PAY = (1.0, 0.6, 0.3)

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        name = rng.choice(["Mia", "Leo", "Sam", "Ivy", "Raj", "Ana"])
        fruit = rng.choice(["apples", "pears", "plums", "lemons"])
        a, b = rng.randint(1, 9), rng.randint(2, 9)
        self.answer, self.tries, self.done, self.won = a + b, 0, False, False
        obs = (f"{name} has {a} {fruit} and picks {b} more {fruit}.\n"
               f"How many {fruit} does {name} have now?\n"
               "Answer as \\boxed{NUMBER}. You have 3 tries.")
        return obs, {}

    @staticmethod
    def _guess(action):
        text = str(action)
        if "\\boxed{" in text:
            text = text[text.rfind("\\boxed{") + 7:]
        nums = re.findall(r"-?\d+", text)
        return int(nums[-1]) if nums and len(nums[-1]) < 6 else None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        g = self._guess(action)
        self.tries += 1
        if g == self.answer:
            self.done = self.won = True
            return "Correct!", self.PAY[self.tries - 1], True, False, {"success": True}
        note = "Give a number." if g is None else f"{g} is too {'high' if g > self.answer else 'low'}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{note} No tries left; it was {self.answer}.", 0.0, True, False, {"success": False}
        return f"{note} Try again.", 0.0, False, False, {"success": False}

# --- solver ---
import re


def solve(observations):
    a, b = (int(n) for n in re.findall(r"\d+", observations[0])[:2])
    return "\\boxed{%d}" % (a + b)
