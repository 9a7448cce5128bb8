# skill: logical-deduction
# setting: games
# hint: Put the three in order from the two comparisons; the lightest is the one never said to be heavier.
import random
import re


class LightestEnv:
    MAX_TRIES = 3
    NAMES = ["Ann", "Bo", "Cy", "Dee", "Eli", "Fay"]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        order = rng.sample(self.NAMES, 3)  # heaviest first
        self.people = sorted(order)
        self.answer = order[2]
        facts = [f"{order[0]} is heavier than {order[1]}.", f"{order[1]} is heavier than {order[2]}."]
        rng.shuffle(facts)
        self.tries, self.done, self.won = 0, False, False
        obs = (" ".join(facts) + f"\nWho is the lightest of {', '.join(self.people)}? "
               "Reply with \\boxed{NAME}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        text = str(action)
        box = re.findall(r"\\boxed\{([^{}]*)\}", text)
        part = box[-1] if box else text
        named = [(part.rfind(p), p) for p in self.people if p in part]
        pick = max(named)[1] if named else None
        if pick == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = "Name one person." if pick is None else f"{pick} is not the lightest."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" No tries left; it was {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}


# --- solver ---
import re


def solve(observations):
    pairs = re.findall(r"(\w+) is heavier than (\w+)\.", observations[0])
    heavier = {a for a, _ in pairs}
    return "\\boxed{%s}" % next(b for _, b in pairs if b not in heavier)
