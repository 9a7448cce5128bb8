# skill: pattern-recognition
# setting: games
# hint: Turn each letter into its place in the alphabet (a=1, b=2, ...), look at the gaps between neighbours and how the gaps change, then turn the next number back into a letter.
import random
import re


class LetterGapsEnv:
    ABC = "abcdefghijklmnopqrstuvwxyz"
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        while True:
            pos, gap, grow = rng.randint(0, 8), rng.randint(1, 3), rng.randint(0, 2)
            places = [pos]
            for _ in range(5):
                places.append(places[-1] + gap)
                gap += grow
            if places[-1] < 26:
                break
        letters = [self.ABC[p] for p in places]
        self.answer = letters[-1]
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"Which letter comes next?\n{', '.join(letters[:-1])}, ?\n"
            f"Put the letter in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = re.sub(r"[^a-z]", "", boxed[-1].lower()) if boxed else ""
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Put your answer inside \\boxed{...}." if not guess else f"{guess} is not right."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
