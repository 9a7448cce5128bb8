# skill: pattern-recognition
# setting: games
# hint: Find how much each number drops from the one before; drop the last number by the same amount.
import random
import re


class CountDownEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        step, n = rng.randint(2, 5), rng.randint(4, 6)
        start = step * (n + rng.randint(1, 4))
        seq = [start - i * step for i in range(n)]
        self.answer = start - n * step
        self.tries, self.done, self.won = 0, False, False
        obs = (f"Sequence: {', '.join(map(str, seq))}, ?\n"
               "What number comes next? Reply with \\boxed{NUMBER}. You have 3 tries.")
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
        tail = f" No tries left; it was {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}


# --- solver ---
import re


def solve(observations):
    seq = [int(x) for x in re.findall(r"-?\d+", observations[0].split("?")[0])]
    return "\\boxed{%d}" % (2 * seq[-1] - seq[-2])
