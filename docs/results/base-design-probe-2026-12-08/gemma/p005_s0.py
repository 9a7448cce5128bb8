# skill: mathematical-reasoning
# setting: games
# hint: Run the lines from top to bottom and update the value of x after each line before reading the print.
import random
import re


class CodePrintEnv:
    def __init__(self):
        self.reset()

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        s = str(action)
        if "\\boxed{" in s:
            s = s.split("\\boxed{")[-1]
        m = re.findall(r"\\boxed\{([^{}]*)\}", action)
        val = int(m[-1]) if m and len(m[-1]) < 7 else None
        if val == self.answer:
            self.done = self.won = True
            return "Correct!", {1: 1.0, 2: 0.6}.get(self.tries, 0.3), True, False, {"success": True}
        if val is None:
            out = "No number found."
        else:
            out = f"It prints {self.answer}.", 0.0, True, False, {"success": False}
        self.tries -= 1
        s = str(action)
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{out} It prints {self.answer}.", 0.0, True, False, {"success": False}
        return out, 0.0, False, False, {"success": False}
