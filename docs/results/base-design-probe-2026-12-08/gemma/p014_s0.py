# skill: pattern-recognition
# setting: games
# hint: Tally how many times each number shows up in the log and pick the one with the biggest tally.
import random
import re


class MostCommonEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        code = self._last_int(action)
        if code == self.answer:
            self.done = self.won = True
            return "Correct!", (1.0, 0.6, 0.3)[self.tries - 1], True, False, {"success": True}
        seen = self.log.count(code) if code is not None else 0
        text = f"Code {code} appears {seen} time(s); another appears more." if code is not None else "Give a code number."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            text += " No tries left."
        return text, 0.0, self.done, False, {"success": False}
