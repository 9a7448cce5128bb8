# skill: logical-deduction
# setting: games
# hint: HINT-MARKER-GUESS the number is between 1 and 4
import random
import re


class GuessEnv:
    def __init__(self, max_turns=3):
        self.max_turns = max_turns

    def reset(self, seed=None):
        self.target = random.Random(seed).randint(1, 4)
        self.turn = 0
        return f"Pick a number from 1 to 4 (seed-dependent). Answer as \\boxed{{N}}.", {}

    def step(self, action):
        self.turn += 1
        m = re.search(r"\\boxed\{([^}]*)\}", action)
        if m and m.group(1).strip() == str(self.target):
            return "Correct!", 1.0, True, False, {"success": True}
        if self.turn >= self.max_turns:
            return f"Wrong; it was {self.target}. Out of turns.", 0.0, False, True, {"success": False}
        return f"Wrong (turn {self.turn}). Try again.", 0.0, False, False, {"success": False}
