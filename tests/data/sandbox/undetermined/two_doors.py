# skill: guessing
# setting: games
# hint: If the first door is wrong, take the other.
import random


class TwoDoorsEnv:
    """Test fixture: the prize is behind a random door the text never names, but with two tries and
    two doors, trying one and then the other wins every episode: determined enough."""

    def reset(self, seed=None, options=None):
        self.door = random.Random(seed).choice(["left", "right"])
        self.tries = 0
        return "Two doors, left and right. Open one as \\boxed{left} or \\boxed{right}; you have two tries.", {}

    def step(self, action):
        self.tries += 1
        if str(action).strip() == "\\boxed{%s}" % self.door:
            return "The prize!", 1.0, True, False, {"success": True}
        return "Empty.", 0.0, self.tries >= 2, False, {"success": False}
