# skill: logical-deduction
# setting: games
# hint: Suppose exactly k statements are true; that holds only if exactly k statements say the number k, so test each k from 0 upward.
import random
import re


class SelfCountEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        n = rng.randint(4, 6)
        while True:
            claims = [rng.randint(0, n) for _ in range(n)]
            good = []
            for k in range(n + 1):
                if claims.count(k) == k:
                    good.append(k)
            if len(good) == 1 and good[0] > 0:
                break
        self.answer = str(good[0])
        self.tries, self.done, self.won = 0, False, False
        lines = ""
        for i, c in enumerate(claims):
            lines += f"{i + 1}. Exactly {c} of these statements are true.\n"
        obs = (
            f"Here are {n} statements:\n{lines}"
            "How many of the statements are true? Answer like \\boxed{3}. You have 2 attempts."
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
