# skill: optimisation
# setting: games
# hint: For the largest sum take the two biggest numbers in the list; for the smallest sum take the two smallest.
import random
import re


class BestPairEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        cards = rng.sample(range(1, 10), rng.randint(4, 5))
        order = sorted(cards)
        big = rng.random() < 0.5
        self.answer = order[-1] + order[-2] if big else order[0] + order[1]
        self.tries, self.done, self.won = 0, False, False
        obs = (f"Cards on the table: {', '.join(map(str, cards))}.\n"
               f"Pick two different cards so their sum is as {'large' if big else 'small'} as possible.\n"
               "What is that sum? Reply with \\boxed{NUMBER}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        text = str(action)
        box = re.findall(r"\\boxed\{([^{}]*)\}", text)
        found = re.findall(r"-?[0-9]+", box[-1] if box else text)
        s = int(found[-1]) if found and len(found[-1]) < 7 else None
        if s == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = "Reply with one sum." if s is None else f"{s} is too {'high' if s > self.answer else 'low'}."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" No tries left; the sum was {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}
