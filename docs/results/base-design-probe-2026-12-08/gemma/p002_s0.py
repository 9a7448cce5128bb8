# skill: pattern-recognition
# setting: games
# hint: Tally how many times each number shows up in the log and pick the one with the biggest tally.
import random
import re


class MostCommonEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        picks = rng.sample(range(1, 16), 4)
        self.answer = picks[0]
        self.log = [picks[0]] * 3 + picks[1:]
        rng.shuffle(self.log)
        self.tries, self.done, self.won = 0, False, False
        obs = (f"A sensor log shows the error codes {', '.join(map(str, self.log))}.\n"
               "Which code appears most often? Answer as \\boxed{NUMBER}. You have 3 tries.")
        return obs, {}

    @staticmethod
    def _last_int(action):
        txt = str(action)
        if "\\boxed{" in txt:
            txt = txt[txt.rfind("\\boxed{"):]
        got = re.findall(r"\d+", txt)
        return int(got[-1]) if got and len(got[-1]) <= 4 else None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        code = self._last_int(action)
        if code == self.answer:
            self.done = self.won = True
            return "Correct!", (1.0, 0.6, 0.3)[self.tries - 1], True, False, {"success": True}
        seen = self.log.count(code) if code is not None else 0
        text = f"Code {code} appears {seen} time(s); another appears more." if self.tries > 1 else "Give a code number."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            text += " No tries left."
        return text, 0.0, self.done, False, {"success": False}
