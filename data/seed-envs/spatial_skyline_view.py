# skill: spatial-reasoning
# setting: games
# hint: Scan from the viewer's side keeping the tallest height so far; a building is visible only if it is taller than all before it.
import random
import re


class SkylineViewEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        heights = [rng.randint(1, 12) for _ in range(rng.randint(6, 9))]
        side = rng.choice(["west", "east"])
        order = heights if side == "west" else list(reversed(heights))
        tallest, self.answer = 0, 0
        for h in order:
            if h > tallest:
                self.answer += 1
                tallest = h
        self.tries, self.done, self.won = 0, False, False
        obs = (
            "Building heights in floors, listed from west to east along a street: "
            f"{', '.join(str(h) for h in heights)}. A person stands far away at the {side} end of the street "
            "and looks along it. A building is hidden if a nearer one is at least as tall. "
            "How many buildings can the person see? "
            f"Answer with a whole number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
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
        if guess is None:
            msg = "Answer with one whole number in \\boxed{...}."
        else:
            msg = f"{guess} is too {'few' if guess < self.answer else 'many'}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} The answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
