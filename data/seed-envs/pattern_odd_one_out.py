# skill: pattern-recognition
# setting: games
# hint: Test simple properties one at a time: even or odd, divisible by a small number, a perfect square, a prime, the last digit, the digit sum. Look for the property that exactly four of the numbers share.
import random
import re


class OddOneOutEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    @staticmethod
    def _properties():
        props = {f"multiple of {k}": (lambda k: lambda n: n % k == 0)(k) for k in (3, 4, 5, 6, 7, 9)}
        props["perfect square"] = lambda n: int(n ** 0.5) ** 2 == n
        props["prime"] = lambda n: n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))
        props["even digit sum"] = lambda n: sum(map(int, str(n))) % 2 == 0
        props["ends in 7"] = lambda n: n % 10 == 7
        return props

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        props = self._properties()
        while True:
            name = rng.choice(sorted(props))
            has = [n for n in range(2, 100) if props[name](n)]
            lacks = [n for n in range(2, 100) if not props[name](n)]
            nums = rng.sample(has, 4) + [rng.choice(lacks)]
            odd = nums[4]
            rng.shuffle(nums)
            unique = [x for x in nums if any(not p(x) and all(p(y) for y in nums if y != x) for p in props.values())]
            if unique == [odd]:
                break
        self.numbers, self.answer = nums, odd
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"Four of these numbers share a simple property that the fifth does not: {', '.join(map(str, nums))}. "
            f"Which number is the odd one out? Put it in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 6 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess in self.numbers:
            msg = f"No, {guess} shares the property with three others."
        else:
            msg = "Answer with one of the five numbers inside \\boxed{...}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the odd one was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
