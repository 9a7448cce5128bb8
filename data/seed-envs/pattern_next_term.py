# skill: pattern-recognition
# setting: games
# hint: Look at the differences between neighbouring terms; if they are not constant, try the differences of differences, ratios, every other term, or the sum of the two previous terms.
import random
import re


class NextTermEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def _sequence(self, rng, kind, n):
        if kind == "arithmetic":
            a, d = rng.randint(-10, 30), rng.choice([-7, -5, -3, 3, 4, 6, 8, 9, 11])
            return [a + d * i for i in range(n)]
        if kind == "geometric":
            a, r = rng.randint(1, 5), rng.choice([2, 3, -2])
            return [a * r ** i for i in range(n)]
        if kind == "second-difference":
            a, d, c = rng.randint(0, 10), rng.randint(1, 5), rng.randint(1, 3)
            return [a + d * i + c * i * (i - 1) // 2 for i in range(n)]
        if kind == "interleaved":
            a, b, d, e = rng.randint(1, 20), rng.randint(20, 50), rng.randint(2, 5), -rng.randint(1, 4)
            return [a + d * (i // 2) if i % 2 == 0 else b + e * (i // 2) for i in range(n)]
        if kind == "fibonacci":
            seq = [rng.randint(1, 5), rng.randint(1, 6)]
            while len(seq) < n:
                seq.append(seq[-1] + seq[-2])
            return seq
        add = rng.randint(1, 4)
        seq = [rng.randint(1, 4)]
        while len(seq) < n:
            seq.append(seq[-1] * 2 if len(seq) % 2 else seq[-1] + add)
        return seq

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        kind = rng.choice(["arithmetic", "geometric", "second-difference", "interleaved", "fibonacci", "double-add"])
        seq = self._sequence(rng, kind, 7)
        self.answer = seq[-1]
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"What number comes next in this sequence?\n{', '.join(map(str, seq[:-1]))}, ?\n"
            f"Put the next number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
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
        msg = "Put a single whole number inside \\boxed{...}." if guess is None else f"{guess} does not continue the pattern."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the next term was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
