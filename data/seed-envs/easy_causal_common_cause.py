# skill: causal-inference
# setting: games
# hint: Forcing one effect by hand leaves the other alone; only changing the shared cause moves both.
import random
import re


class CommonCauseEnv:
    MAX_TRIES = 3
    STORIES = [("heat", "ice cream sales", "sunburns"), ("rain", "umbrella sales", "wet roads"),
               ("flu", "tissue sales", "sick notes")]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        cause, e1, e2 = rng.choice(self.STORIES)
        self.answer = rng.choice(["down", "same", "up"])
        what = f"there is {'more' if self.answer == 'up' else 'less'} {cause}"
        if self.answer == "same":
            what = f"we force {e1} {rng.choice(['up', 'down'])} directly"
        self.tries, self.done, self.won = 0, False, False
        obs = (f"More {cause} raises both {e1} and {e2}; {e1} do not change {e2}.\n"
               f"Suppose {what}. What happens to {e2}? Options: down, same, up.\n"
               "Say \\boxed{WORD}; 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Game over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        part = (re.findall(r"\\boxed\{([^{}]*)\}", str(action)) or [str(action)])[-1]
        say = (re.findall(r"\b(down|same|up)\b", part.lower()) or [None])[-1]
        if say == self.answer:
            self.done = self.won = True
            return "Yes!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = f"Not {say}." if say else "Choose."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" Out of tries: {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}
