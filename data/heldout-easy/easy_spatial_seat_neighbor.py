# skill: spatial-reasoning
# setting: games
# hint: Write the row out left to right and read off the seat next to the named person on the asked side.
import random
import re


class SeatNeighborEnv:
    MAX_TRIES = 3
    NAMES = ["Ann", "Bo", "Cy", "Dee", "Eli", "Fay", "Gus"]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.row = rng.sample(self.NAMES, 4)
        side = rng.choice(["left", "right"])
        i = rng.randint(1, 3) if side == "left" else rng.randint(0, 2)
        self.answer = self.row[i - 1] if side == "left" else self.row[i + 1]
        self.tries, self.done, self.won = 0, False, False
        obs = (f"Four friends sit in a row, from left to right: {', '.join(self.row)}.\n"
               f"Who sits just to the {side} of {self.row[i]}? Reply with \\boxed{{NAME}}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        text = str(action)
        box = re.findall(r"\\boxed\{([^{}]*)\}", text)
        part = box[-1] if box else text
        named = [(part.rfind(p), p) for p in self.row if p in part]
        pick = max(named)[1] if named else None
        if pick == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = "Name one friend." if pick is None else f"{pick} does not sit there."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" No tries left; it was {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}


# --- solver ---
import re


def solve(observations):
    first = observations[0]
    row = re.search(r"left to right: ([\w, ]+)\.", first).group(1).split(", ")
    side, who = re.search(r"just to the (left|right) of (\w+)\?", first).groups()
    return "\\boxed{%s}" % row[row.index(who) + (1 if side == "right" else -1)]
