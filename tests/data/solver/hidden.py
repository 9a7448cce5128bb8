# skill: guessing
# setting: games
# hint: The number is between 1 and 100.
import random


class HiddenEnv:
    """Test fixture: valid, never solvable: the answer is a hidden random number the text never shows."""

    def reset(self, seed=None, options=None):
        self.secret = random.Random(seed).randint(1, 100)
        return "I picked a number from 1 to 100. Answer as \\boxed{N}.", {}

    def step(self, action):
        ok = str(action).strip() == "\\boxed{%d}" % self.secret
        return ("Right." if ok else "No."), float(ok), True, False, {"success": ok}

# --- solver ---
def solve(observations):
    return "\\boxed{50}"
