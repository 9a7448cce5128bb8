# skill: arithmetic
# setting: games
# hint: Add the two numbers.
import random


class SumEnv:
    """Test fixture: the sum of two numbers shown in the observation; solvable from it."""

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.a, self.b = rng.randint(10, 99), rng.randint(10, 99)
        return "What is %d + %d? Answer as \\boxed{N}." % (self.a, self.b), {}

    def step(self, action):
        ok = str(action).strip() == "\\boxed{%d}" % (self.a + self.b)
        return ("Correct." if ok else "Wrong."), float(ok), True, False, {"success": ok}

# --- solver ---
import re


def solve(observations):
    a, b = map(int, re.findall(r"\d+", observations[0])[:2])
    return "\\boxed{%d}" % (a + b)
