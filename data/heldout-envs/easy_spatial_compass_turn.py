# skill: spatial-reasoning
# setting: games
# hint: Clockwise order is N, E, S, W: each right turn moves one step along it and each left turn one step back.
import random
import re


class CompassTurnEnv:
    MAX_TRIES = 3
    DIRS = ["north", "east", "south", "west"]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        start = rng.randrange(4)
        turns = [rng.choice(["left", "right"]) for _ in range(rng.randint(1, 3))]
        end = (start + sum(1 if t == "right" else -1 for t in turns)) % 4
        self.answer, self.opts = self.DIRS[end], self.DIRS
        self.tries, self.done, self.won = 0, False, False
        obs = (f"You stand facing {self.DIRS[start]}. You turn {', then '.join(turns)}.\n"
               "Which way do you face now? Options: north, east, south, west.\n"
               "Answer as \\boxed{DIRECTION}; 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        box = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        heads = re.findall(r"north|east|south|west", (box[-1] if box else str(action)).lower())
        face = heads[-1] if heads else None
        if face == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = f"You are not facing {face}." if face else "Name a direction."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" Out of tries; you face {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}
