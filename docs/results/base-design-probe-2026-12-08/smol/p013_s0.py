# skill: spatial-reasoning
# setting: games
# hint: In a bottom-to-top list each name sits directly on the one below it and directly under the one above it.
import random
import re

class ShelfStackEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        pile = rng.sample(["math", "history", "music", "science", "poetry"], 4)
        i = rng.randrange(1, 3)
        up = rng.random() < 0.5
        self.answer = pile[i + 1] if up else pile[i - 1]
        self.opts = sorted(pile)
        self.tries, self.done, self.won = 0, False, False
        obs = (f"Four books are stacked. From bottom to top: {', '.join(pile)}.\n"
               f"Which book is directly {'above' if up else 'below'} the {pile[i]} book? "
               f"Options: {', '.join(self.opts)}")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 1.0, True, False, {"success": True}
        self.tries += 1
        box = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        named = [w for w in re.findall(r"[a-z]+", (box[-1] if box else str(action)).lower()) if w in self.opts]
        book = named[0] if named else None
        if book == self.answer:
            self.done = self.tries >= self.MAX_TRIES
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1]
        msg = f"Not the {book} book." if book else "Name one book."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" Out of tries; it was {self.answer}." if self.done else " Try again."
        return msg + tail, 1.0, self.done, False, {"success": False}
