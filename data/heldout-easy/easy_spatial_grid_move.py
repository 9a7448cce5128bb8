# skill: spatial-reasoning
# setting: games
# hint: Right adds to x and left takes from it; up adds to y and down takes from it.
import random
import re


class GridMoveEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        x, y = rng.randint(2, 6), rng.randint(2, 6)
        dx, dy = rng.choice([-2, -1, 1, 2, 3]), rng.choice([-2, -1, 1, 2, 3])
        self.answer = (x + dx, y + dy)
        moves = [f"{abs(dx)} {'right' if dx > 0 else 'left'}", f"{abs(dy)} {'up' if dy > 0 else 'down'}"]
        rng.shuffle(moves)
        self.tries, self.done, self.won = 0, False, False
        obs = (f"A robot stands at (x, y) = ({x}, {y}). It moves {moves[0]}, then {moves[1]}.\n"
               "Where is it now? Reply with \\boxed{X, Y}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        text = str(action)
        box = re.findall(r"\\boxed\{([^{}]*)\}", text)
        found = re.findall(r"-?[0-9]+", box[-1] if box else text)
        pos = (int(found[-2]), int(found[-1])) if len(found) >= 2 and max(len(f) for f in found[-2:]) < 7 else None
        if pos == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = "Reply with two numbers, x then y." if pos is None else f"The robot is not at ({pos[0]}, {pos[1]})."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" No tries left; it was at ({self.answer[0]}, {self.answer[1]})." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}


# --- solver ---
import re

STEP = {"right": (1, 0), "left": (-1, 0), "up": (0, 1), "down": (0, -1)}


def solve(observations):
    first = observations[0]
    x, y = (int(v) for v in re.search(r"= \((\d+), (\d+)\)", first).groups())
    for n, way in re.findall(r"(\d+) (right|left|up|down)", first):
        x, y = x + int(n) * STEP[way][0], y + int(n) * STEP[way][1]
    return "\\boxed{%d, %d}" % (x, y)
