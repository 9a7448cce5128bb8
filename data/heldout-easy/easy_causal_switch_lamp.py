# skill: causal-inference
# setting: games
# hint: Look for the one trial where the lamp changed; the switch flipped in that trial is the cause.
import random
import re


class SwitchLampEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.switches = rng.sample(["A", "B", "C", "D"], 3)
        self.answer = rng.choice(self.switches)
        trials = [f"Flipped switch {s}: the lamp {'came on' if s == self.answer else 'stayed off'}." for s in self.switches]
        self.tries, self.done, self.won = 0, False, False
        obs = ("The lamp starts off. Each trial flips one switch, then flips it back.\n" + "\n".join(trials)
               + "\nWhich switch controls the lamp? Reply with \\boxed{LETTER}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        text = str(action)
        box = re.findall(r"\\boxed\{([^{}]*)\}", text)
        found = re.findall(r"\b([A-D])\b", box[-1] if box else text)
        pick = found[-1] if found else None
        if pick == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = "Name one switch." if pick is None else f"Switch {pick} does not control the lamp."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" No tries left; it was switch {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}


# --- solver ---
import re


def solve(observations):
    return "\\boxed{%s}" % re.search(r"switch (\w): the lamp came on", observations[0]).group(1)
