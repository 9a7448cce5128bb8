# skill: pattern-recognition
# setting: games
# hint: Compare each result with the sum and the product of its two numbers and find one formula that fits every example.
import random
import re


class SecretOperatorEnv:
    RULES = [
        lambda a, b: a * b + a,
        lambda a, b: a * b - b,
        lambda a, b: a * a + b,
        lambda a, b: 2 * (a + b),
        lambda a, b: a * b + a + b,
        lambda a, b: a * a - b * b,
    ]
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        while True:
            rule = rng.choice(self.RULES)
            pairs = [(rng.randint(2, 9), rng.randint(2, 9)) for _ in range(4)]
            fits = [f for f in self.RULES if all(f(a, b) == rule(a, b) for a, b in pairs[:3])]
            a, b = pairs[3]
            if len({f(a, b) for f in fits}) == 1 and rule(a, b) != 0:
                break
        self.answer = rule(a, b)
        lines = "\n".join(f"{x} # {y} = {rule(x, y)}" for x, y in pairs[:3])
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"# is a secret operation on two numbers:\n{lines}\n"
            f"What is {a} # {b}? Put the number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"-?\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 12 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Put one whole number inside \\boxed{...}." if guess is None else "Wrong."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
