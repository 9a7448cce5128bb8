# skill: pattern-recognition
# setting: games
# hint: Find the shortest block that keeps repeating, count its length, and use the remainder of the position divided by that length; a remainder of zero points to the last item of the block.
import random
import re


class CyclePositionEnv:
    SYMBOLS = ["red", "blue", "green", "yellow", "black", "white", "pink", "gray"]
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        size = rng.randint(3, 5)
        while True:
            block = [rng.choice(self.SYMBOLS[:size + 1]) for _ in range(size)]
            if len(set(block)) > 1 and all(block != block[k:] + block[:k] for k in range(1, size)):
                break
        self.position = rng.randint(20, 99)
        self.answer = block[(self.position - 1) % size]
        shown = [block[i % size] for i in range(2 * size + rng.randint(1, size - 1))]
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A string of beads repeats the same colour pattern forever. The first {len(shown)} beads are:\n"
            f"{', '.join(shown)}, ...\nWhat colour is bead number {self.position}? "
            f"Put the colour in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        words = [w for w in re.findall(r"[a-z]+", boxed[-1].lower()) if w in self.SYMBOLS] if boxed else []
        guess = words[0] if len(words) == 1 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Name exactly one colour inside \\boxed{...}." if guess is None else f"Bead {self.position} is not {guess}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; it was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
