# skill: spatial-reasoning
# setting: games
# hint: Follow one corner first: decide where the top-left letter lands under each operation, then check the top row's new position, and rebuild the grid row by row; apply several operations in the order given.
import random
import re
import string


class GridRotationEnv:
    OPS = {
        "rotate it a quarter turn clockwise": lambda g: [list(r) for r in zip(*g[::-1])],
        "rotate it a quarter turn counterclockwise": lambda g: [list(r) for r in zip(*g)][::-1],
        "rotate it half a turn": lambda g: [r[::-1] for r in g[::-1]],
        "mirror it left to right": lambda g: [r[::-1] for r in g],
        "flip it upside down": lambda g: [list(r) for r in g[::-1]],
    }
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        letters = rng.sample(string.ascii_uppercase, 9)
        grid = [letters[i:i + 3] for i in range(0, 9, 3)]
        names = rng.sample(sorted(self.OPS), rng.choice([1, 1, 2]))
        result = grid
        for name in names:
            result = self.OPS[name](result)
        self.answer = ["".join(r) for r in result]
        self.tries, self.done, self.won = 0, False, False
        shown = "\n".join(" ".join(r) for r in grid)
        obs = (
            f"Here is a 3x3 grid of letters:\n{shown}\nNow {', then '.join(names)}. "
            "What does the grid look like afterwards? Write its rows from top to bottom separated by slashes, "
            f"like \\boxed{{ABC/DEF/GHI}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    @staticmethod
    def _parse(action):
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        letters = re.findall(r"[A-Za-z]", boxed[-1]) if boxed else []
        if len(letters) != 9:
            return None
        flat = "".join(letters).upper()
        return [flat[i:i + 3] for i in range(0, 9, 3)]

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        guess = self._parse(action)
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Give exactly nine letters, three rows separated by slashes, inside \\boxed{...}."
        else:
            msg = f"Not quite: {sum(g == a for g, a in zip(guess, self.answer))} of 3 rows are right."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the grid was {'/'.join(self.answer)}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
