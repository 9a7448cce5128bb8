# skill: spatial-reasoning
# setting: games
# hint: Spread from S only up, down, left and right through open cells and count cells reached.
import random
import re


class FloodFillEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        cells = [(r, c) for r in range(6) for c in range(6)]
        start = rng.choice(cells)
        walls = {cell for cell in cells if rng.random() < 0.35 and cell != start}
        seen, todo = {start}, [start]
        while todo:
            r, c = todo.pop()
            for nxt in [(r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)]:
                if nxt in cells and nxt not in walls and nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        self.answer = len(seen)
        lines = []
        for r in range(6):
            marks = {start: "S"}
            lines.append(" ".join(marks.get((r, c), "#" if (r, c) in walls else ".") for c in range(6)))
        self.tries, self.done, self.won = 0, False, False
        obs = (
            "Paint is poured on S (# is wall):\n" + "\n".join(lines)
            + "\nIt spreads up, down, left and right via open cells. How many cells get paint? "
            f"Answer in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Give one number in \\boxed{...}." if guess is None else f"{guess} is wrong."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} The answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " Try again.", 0.0, False, False, {"success": False}
