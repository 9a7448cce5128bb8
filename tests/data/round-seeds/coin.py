# skill: pattern-recognition
# setting: games
# hint: Luck decides here; pick either side.
import random


class CoinEnv:
    """A random policy wins about half of the episodes (test fixture: GRPO groups with variance)."""

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        self.win = random.Random(seed).random() < 0.5
        return "Call the coin: answer heads or tails in \\boxed{...}.", {}

    def step(self, action):
        won = self.win and ";" not in str(action)
        return "The coin has spoken.", 1.0 if won else 0.0, True, False, {"success": won}
