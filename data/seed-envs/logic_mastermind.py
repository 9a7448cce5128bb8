# skill: logical-deduction
# setting: games
# hint: Keep a list of the codes that still agree with every piece of feedback so far and always guess one of them; a guess scoring zero in both counts rules out all of its digits at once.
import random
import re


class MastermindEnv:
    MAX_TRIES = 7
    DIGITS = "12345"

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.code = "".join(rng.sample(self.DIGITS, 3))
        self.tries, self.done, self.won = 0, False, False
        self.history = []
        obs = (
            "I picked a secret code of 3 different digits, each from 1 to 5 (for example 241). "
            "After each guess I tell you how many digits are correct and in the right place, and how many "
            "are in the code but in the wrong place. Put each guess, 3 different digits, in \\boxed{...}. "
            f"You have {self.MAX_TRIES} guesses."
        )
        return obs, {}

    def _parse(self, action):
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        if not boxed:
            return None
        digits = re.sub(r"[\s,\-]", "", boxed[-1])
        ok = len(digits) == 3 and len(set(digits)) == 3 and all(d in self.DIGITS for d in digits)
        return digits if ok else None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        guess = self._parse(action)
        left = self.MAX_TRIES - self.tries
        if guess == self.code:
            self.done, self.won = True, True
            return f"{guess} is the code. You cracked it!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Invalid guess: use 3 different digits from 1 to 5, like \\boxed{123}."
        else:
            exact = sum(g == c for g, c in zip(guess, self.code))
            near = len(set(guess) & set(self.code)) - exact
            self.history.append(f"{guess}: {exact} right place, {near} wrong place")
            msg = f"{guess}: {exact} in the right place, {near} in the code but in the wrong place."
        if left <= 0:
            self.done = True
            return f"{msg} No guesses left; the code was {self.code}.", 0.0, True, False, {"success": False}
        past = " | ".join(self.history) or "none"
        return f"{msg}\nGuesses so far: {past}. Guesses left: {left}.", 0.0, False, False, {"success": False}
