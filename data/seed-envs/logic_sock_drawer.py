# skill: logical-deduction
# setting: games
# hint: Picture the unluckiest draw: take as many socks as possible while still missing the goal, then one more sock must reach it.
import random
import re


class SockDrawerEnv:
    COLORS = ["red", "blue", "green", "black"]
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        k = rng.randint(2, 4)
        counts = [rng.randint(2, 9) for _ in range(k)]
        need = rng.randint(2, 4)
        while max(counts) < need:
            counts[0] += 1
        worst = 0
        for c in counts:
            worst += min(c, need - 1)
        self.answer = str(worst + 1)
        self.tries, self.done, self.won = 0, False, False
        parts = [f"{c} {self.COLORS[i]}" for i, c in enumerate(counts)]
        obs = (
            f"A dark drawer holds {', '.join(parts)} socks. You pull socks out without looking.\n"
            f"What is the smallest number of socks you must pull to be sure of having {need} socks "
            "of the same color? Answer like \\boxed{5}. You have 2 attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = boxed[-1].strip() if boxed else ""
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"Wrong: the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return "Wrong, try again.", 0.0, False, False, {"success": False}
