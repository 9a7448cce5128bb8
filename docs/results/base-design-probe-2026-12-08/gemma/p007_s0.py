# skill: spatial-reasoning
# setting: games
# hint:
# in a bottom-to-top list each name sits directly on the one before it and directly under the one after it.
import random
import re


class ShelfStackEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        box = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        named = [w for w in re.findall(r"[a-z]+", (box[-1] if box else str(action)).lower()) if w in self.opts]
        book = named[-1] if named else None
        if book == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = f"Not the {book} book." if book else "Name one book."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" Out of tries; it was {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}
