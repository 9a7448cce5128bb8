# skill: logical-deduction
# setting: games
# hint: Line the runners up from the clues, earliest first, then read off the end asked about.
import random
import re


class RaceOrderEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        order = rng.sample(["Ada", "Ben", "Cy", "Dot", "Eli", "Fay"], 3)
        ask = rng.choice(["first", "last"])
        self.answer = order[0] if ask == "first" else order[2]
        self.options = rng.sample(order, 3)
        self.left = list(self.options)
        self.tries, self.done, self.won = 0, False, False
        obs = (f"{order[0]} finished before {order[1]}. {order[1]} finished before {order[2]}.\n"
               f"Who finished {ask}? Options: {', '.join(self.options)}.\n"
               "Answer as \\boxed{NAME}; 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        text = str(action).rsplit("\\boxed{", 1)[-1].lower()
        hits = [o for w in re.findall(r"[a-z]+", text) for o in self.options if o.lower() == w]
        guess = hits[-1] if hits else None
        if guess == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        self.left = [o for o in self.left if o != guess]
        fb = f"Not {guess}; it is one of: {', '.join(self.left)}." if guess else "Name a runner."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"Wrong. It was {self.answer}.", 0.0, True, False, {"success": False}
        return fb, 0.0, False, False, {"success": False}
