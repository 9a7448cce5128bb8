# skill: deduction
# setting: games
# hint: Use the feedback letters to narrow the word.
import random

WORDS = ["apple", "grape", "lemon", "melon", "peach", "berry", "mango", "olive"]


class TinyWordleEnv:
    def __init__(self):
        self.max_turns = 6

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.secret = rng.choice(WORDS)
        self.turn = 0
        return "Guess a 5-letter fruit among %s as \\boxed{word}." % ", ".join(sorted(WORDS)), {}

    def step(self, action):
        self.turn += 1
        guess = action.split("{")[-1].split("}")[0].strip().lower() if "{" in action else action.strip()
        fb = "".join("G" if i < len(guess) and guess[i] == c else "." for i, c in enumerate(self.secret))
        if guess == self.secret:
            return "Solved!", 1.0, True, False, {"success": True}
        return "Feedback: " + fb, 0.0, self.turn >= self.max_turns, False, {"fb": fb, "turn": self.turn}
