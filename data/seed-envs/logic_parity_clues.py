# skill: logical-deduction
# setting: games
# hint: Two numbers whose sum is divisible by 2 share the same parity and otherwise their parities differ, so walk the chain of sums from the number you already know.
import random
import re


class ParityCluesEnv:
    NAMES = ["a", "b", "c", "d", "e"]
    MAX_TRIES = 1

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        n = rng.randint(3, 5)
        names = self.NAMES[:n]
        order = rng.sample(names, n)
        par = {x: rng.randint(0, 1) for x in names}
        word = ["even", "odd"]
        lines = f"- {order[0]} is {word[par[order[0]]]}.\n"
        for i in range(1, n):
            x, y = order[i - 1], order[i]
            lines += f"- {x} + {y} is {word[(par[x] + par[y]) % 2]}.\n"
        target = order[-1]
        self.answer = word[par[target]]
        self.done, self.won = False, False
        obs = (
            f"The whole numbers {', '.join(names)} satisfy:\n{lines}"
            f"Is {target} even or odd? Answer \\boxed{{even}} or \\boxed{{odd}}. You have one attempt."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = boxed[-1].strip().lower() if boxed else ""
        self.done = True
        if guess == self.answer:
            self.won = True
            return "Correct!", 1.0, True, False, {"success": True}
        return f"Wrong: it is {self.answer}.", 0.0, True, False, {"success": False}
