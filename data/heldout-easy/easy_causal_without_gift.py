# skill: causal-inference
# setting: games
# hint: Undo the one event: add back what was given away, or take away what was received.
import random
import re


class WithoutGiftEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        name, other = rng.sample(["Tom", "Ana", "Raj", "Lea", "Max", "Ivy"], 2)
        thing = rng.choice(["marbles", "stickers", "shells", "cards"])
        moved = rng.randint(1, 6)
        now = rng.randint(moved + 1, moved + 12)
        gave = rng.random() < 0.5
        self.answer = now + moved if gave else now - moved
        event = f"{name} gave {moved} {thing} to {other}" if gave else f"{other} gave {name} {moved} {thing}"
        self.tries, self.done, self.won = 0, False, False
        obs = (f"Today {event}. Now {name} has {now} {thing}.\n"
               f"If that had not happened, how many {thing} would {name} have? Reply with \\boxed{{NUMBER}}. You have 3 tries.")
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
    first = observations[0]
    giver, moved = re.search(r"Today (\w+) gave (?:\w+ )?(\d+)", first).groups()
    name, now = re.search(r"Now (\w+) has (\d+)", first).groups()
    moved, now = int(moved), int(now)
    return "\\boxed{%d}" % (now + moved if giver == name else now - moved)
