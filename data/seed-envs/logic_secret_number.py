# skill: logical-deduction
# setting: games
# hint: Start from the range the clues allow, then strike out each number that fails a divisibility or digit-sum clue.
import random
import re


class SecretNumberEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    @staticmethod
    def _clue(rng, n):
        kind = rng.choice(["range", "div", "digits"])
        if kind == "range":
            k = rng.randint(10, 99)
            if n > k:
                return f"It is greater than {k}.", lambda x: x > k
            return f"It is at most {k}.", lambda x: x <= k
        d = rng.randint(2, 9)
        if kind == "div" and n % d == 0:
            return f"It is divisible by {d}.", lambda x: x % d == 0
        s = n // 10 + n % 10
        return f"The sum of its digits is {s}.", lambda x: x // 10 + x % 10 == s

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        n = rng.randint(10, 99)
        left, clues = list(range(10, 100)), []
        while len(left) > 1:
            text, test = self._clue(rng, n)
            keep = [x for x in left if test(x)]
            if len(keep) < len(left) and text not in clues:
                clues.append(text)
                left = keep
        self.answer = str(n)
        self.tries, self.done, self.won = 0, False, False
        lines = "\n".join(f"- {c}" for c in clues)
        obs = (
            f"I picked a number from 10 to 99.\n{lines}\n"
            "Which is it? Answer like \\boxed{42}. You have 2 attempts."
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
            return f"Wrong: {self.answer}.", 0.0, True, False, {"success": False}
        return "Wrong, try again.", 0.0, False, False, {"success": False}
