# skill: guessing
# setting: games
# hint: Halve the range after each reply.
import random


class HigherLowerEnv:
    """Test fixture: the same first observation on every seed and a hidden number, but each wrong
    guess is answered "higher" or "lower": the agent can search, so the answer is determined."""

    def reset(self, seed=None, options=None):
        self.secret = random.Random(seed).randint(1, 100)
        self.tries = 0
        return "I picked a number from 1 to 100. Guess it as \\boxed{N}; you have 7 tries.", {}

    def step(self, action):
        self.tries += 1
        s = str(action).strip()
        guess = int(s[7:-1]) if s.startswith("\\boxed{") and s.endswith("}") and s[7:-1].isdigit() else None
        if guess == self.secret:
            return "Right.", 1.0, True, False, {"success": True}
        reply = "A whole number, please." if guess is None else ("Higher." if guess < self.secret else "Lower.")
        return reply, 0.0, self.tries >= 7, False, {"success": False}
