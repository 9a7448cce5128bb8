# skill: pattern-recognition
# setting: games
# hint: Sort the numbers into even and odd; the one alone in its group does not fit.
import random
import re


class OddOneOutEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        common = rng.choice([0, 1])
        group = rng.sample([n for n in range(1, 21) if n % 2 == common], 3)
        self.answer = rng.choice([n for n in range(1, 21) if n % 2 != common])
        self.options = rng.sample(group + [self.answer], 4)
        self.tries, self.done, self.won = 0, False, False
        obs = (f"Numbers: {', '.join(str(n) for n in self.options)}.\n"
               "Three share a pattern; which one does not fit?\n"
               "Answer as \\boxed{NUMBER}. You have 3 tries.")
        return obs, {}

    def _number(self, action):
        text = str(action)
        i = text.rfind("\\boxed{")
        nums = re.findall(r"\d+", text[i:] if i > -1 else text)
        return int(nums[-1]) if nums and len(nums[-1]) < 4 else None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        n = self._number(action)
        if n == self.answer:
            self.done = self.won = True
            return "Correct!", (1.0, 0.6, 0.3)[self.tries - 1], True, False, {"success": True}
        if n in self.options:
            self.options.remove(n)
            fb = f"{n} fits the pattern. Left: {', '.join(map(str, self.options))}."
        else:
            fb = "Pick a listed number."
        self.done = self.tries >= self.MAX_TRIES
        return fb, 0.0, self.done, False, {"success": False}
