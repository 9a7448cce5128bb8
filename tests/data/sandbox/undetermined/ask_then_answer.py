# skill: logical-deduction
# setting: games
# hint: Look before you answer.
import random


class LookFirstEnv:
    """Test fixture: the answer is hidden at the start, and a wrong answer ends the episode, but
    one probe reply ("look") shows it: what the agent can find out fixes the answer."""

    def reset(self, seed=None, options=None):
        self.colour = random.Random(seed).choice(["red", "green", "blue", "amber"])
        return "A lamp is behind you. Say look to turn around, or name its colour as \\boxed{colour}.", {}

    def step(self, action):
        a = str(action).strip()
        if a == "\\boxed{look}" or a == "look":
            return "The lamp is %s." % self.colour, 0.0, False, False, {}
        won = a == "\\boxed{%s}" % self.colour
        return ("Yes." if won else "No."), float(won), True, False, {"success": won}
