# skill: pattern-recognition
# setting: games
# hint: Any face may come up; stay calm.
import random


class DieRollEnv:
    """A test fixture: the die decides, whatever the player writes (except a semicolon)."""

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        self.face = random.Random(seed).randint(1, 6)
        return "A six-sided die is rolled. Guess whether it shows at most three; write low or high.", {}

    def step(self, action):
        text = str(action)
        success = self.face <= 3 and ";" not in text
        reward = 1.0 if success else 0.0
        return f"It shows {self.face}.", reward, True, False, {"success": success}
