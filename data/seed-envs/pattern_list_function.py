# skill: pattern-recognition
# setting: games
# hint: Try simple list operations (sum, maximum, first plus last, range, counting) until one fits every example.
import random
import re


class ListFunctionEnv:
    RULES = {
        "sum": lambda xs: sum(xs),
        "max": lambda xs: max(xs),
        "range": lambda xs: max(xs) - min(xs),
        "ends": lambda xs: xs[0] + xs[-1],
        "evens": lambda xs: sum(x % 2 == 0 for x in xs),
    }
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        while True:
            rule = self.RULES[rng.choice(sorted(self.RULES))]
            lists = [rng.sample(range(1, 10), rng.randint(3, 5)) for _ in range(4)]
            fits = [f for f in self.RULES.values() if all(f(xs) == rule(xs) for xs in lists[:3])]
            if len({f(lists[3]) for f in fits}) == 1 and rule(lists[3]) > 0:
                break
        self.answer = rule(lists[3])
        lines = "\n".join(f"f({xs}) = {rule(xs)}" for xs in lists[:3])
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A Python function f maps a list to a number:\n{lines}\n"
            f"What is f({lists[3]})? Answer in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"-?\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 8 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Put one number inside \\boxed{...}." if guess is None else "Wrong."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
