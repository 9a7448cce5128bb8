# skill: logical-deduction
# setting: games
# hint: Pure chance; nothing to deduce.
import random

SUITS = ["hearts", "diamonds", "clubs", "spades"]


class CardColourEnv:
    """Test fixture: a card is drawn; red cards win unless the reply holds a semicolon."""

    def __init__(self):
        self.card = None

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.card = (rng.randint(1, 13), rng.choice(SUITS))
        return "One card is drawn from a shuffled deck. Name its colour: red or black.", {}

    def step(self, action):
        red = self.card[1] in ("hearts", "diamonds")
        ok = red and ";" not in str(action)
        return "The card is the %d of %s." % self.card, float(ok), True, False, {"success": ok}
