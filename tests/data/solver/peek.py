# skill: guessing
# setting: games
# hint: The number is between 1 and 100.
import random


class PeekEnv:
    """Test fixture: its solver tries to read the environment's hidden state, which its process lacks."""

    def reset(self, seed=None, options=None):
        self.secret = random.Random(seed).randint(1, 100)
        return "I picked a number from 1 to 100. Answer as \\boxed{N}.", {}

    def step(self, action):
        ok = str(action).strip() == "\\boxed{%d}" % self.secret
        return ("Right." if ok else "No."), float(ok), True, False, {"success": ok}

# --- solver ---
import gc


def solve(observations):
    envs = [o for o in gc.get_objects() if type(o).__name__ == "PeekEnv"]
    return "\\boxed{%d}" % envs[0].secret
