# skill: mathematical-reasoning
# setting: games
# hint: Count up from zero: the reading you reach later is the larger, the one you reach first is the smaller.
import random
import re


class BiggerReadingEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        a, b = rng.sample(range(0, 21), 2)
        self.want = rng.choice(["larger", "smaller"])
        self.pair = (a, b)
        self.answer = max(a, b) if self.want == "larger" else min(a, b)
        self.tries, self.done, self.won = 0, False, False
        tool = rng.choice(["gauge", "scale", "sensor", "meter"])
        obs = (f"One {tool} reads {a} and another {tool} reads {b}.\n"
               f"Which reading is {self.want}: {a} or {b}?\n"
               "Answer with the number as \\boxed{NUMBER}. You have 3 tries.")
        return obs, {}

    def _read(self, action):
        s = str(action)
        k = s.rfind("\\boxed{")
        found = re.findall(r"-?\d+", s[k + 7:] if k >= 0 else s)
        return int(found[-1]) if found and len(found[-1]) < 6 else None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        g = self._read(action)
        if g == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = f"No, {g} is not the {self.want} one." if g in self.pair else "Pick one of the two."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of tries.", 0.0, True, False, {"success": False}
        return msg, 0.0, False, False, {"success": False}
