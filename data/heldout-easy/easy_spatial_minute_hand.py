# skill: spatial-reasoning
# setting: games
# hint: Each number on the clock face is five minutes: multiply the number the minute hand points at by five.
import random
import re


class MinuteHandEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        mark = rng.randint(1, 11)
        self.answer = 5 * mark
        self.tries, self.done, self.won = 0, False, False
        obs = (f"On a clock, the long minute hand points straight at the {mark}.\n"
               "How many minutes past the hour is it? Reply with \\boxed{NUMBER}. You have 3 tries.")
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
        tail = f" No tries left; it was {self.answer} minutes past." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}


# --- solver ---
import re


def solve(observations):
    return "\\boxed{%d}" % (5 * int(re.search(r"at the (\d+)\.", observations[0]).group(1)))
