# skill: logical-deduction
# setting: games
# hint: Check both conditions for every number; only one passes both.
import random
import re


class EvenAndBigEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        limit = rng.randint(4, 12)
        parity = rng.choice(["even", "odd"])
        want = 0 if parity == "even" else 1
        good = [n for n in range(limit + 1, limit + 10) if n % 2 == want]
        self.answer = rng.choice(good)
        wrong_parity = [n for n in range(limit + 1, limit + 10) if n % 2 != want]
        too_small = [n for n in range(1, limit + 1) if n % 2 == want]
        self.options = rng.sample([self.answer, rng.choice(wrong_parity), rng.choice(too_small)], 3)
        self.parity, self.limit = parity, limit
        self.tries, self.done, self.won = 0, False, False
        obs = (f"Numbers: {', '.join(map(str, self.options))}.\n"
               f"Which number is {parity} and greater than {limit}? Reply with \\boxed{{NUMBER}}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        text = str(action)
        box = re.findall(r"\\boxed\{([^{}]*)\}", text)
        found = re.findall(r"[0-9]+", box[-1] if box else text)
        n = int(found[-1]) if found and len(found[-1]) < 7 else None
        if n == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        if n is None or n not in self.options:
            msg = "Pick one of the numbers."
        elif n <= self.limit:
            msg = f"{n} is not greater than {self.limit}."
        else:
            msg = f"{n} is not {self.parity}."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" No tries left; it was {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}


# --- solver ---
import re


def solve(observations):
    first = observations[0]
    nums = [int(x) for x in re.search(r"Numbers: ([\d, ]+)\.", first).group(1).split(", ")]
    parity, limit = re.search(r"is (even|odd) and greater than (\d+)", first).groups()
    want = 0 if parity == "even" else 1
    return "\\boxed{%d}" % next(n for n in nums if n % 2 == want and n > int(limit))
