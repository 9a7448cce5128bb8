# skill: spatial-reasoning
# setting: games
# hint: Chain the clues into one left-to-right row (X left of Y means Y is right of X), then read the asked spot.
import random
import re


class RowOrderEnv:
    MAX_TRIES = 3
    SPOTS = ["leftmost", "second from left", "second from right", "rightmost"]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        row = rng.sample(["cat", "dog", "fox", "owl", "hen"], 4)
        clues = [rng.choice([f"the {a} is just left of the {b}", f"the {b} is just right of the {a}"])
                 for a, b in zip(row, row[1:])]
        rng.shuffle(clues)
        spot = rng.randrange(4)
        self.answer, self.opts = row[spot], sorted(row)
        self.tries, self.done, self.won = 0, False, False
        obs = (f"Four pets sit in a row: {'; '.join(clues)}.\n"
               f"Which pet is {self.SPOTS[spot]}? Options: {', '.join(self.opts)}.\n"
               "Answer as \\boxed{PET}; 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Game over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        box = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        said = [w for w in re.findall(r"[a-z]+", (box or [str(action)])[-1].lower()) if w in self.opts]
        if said and said[-1] == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = f"Not the {said[-1]}." if said else "Name one."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" Out of tries: {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}
