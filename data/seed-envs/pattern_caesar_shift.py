# skill: pattern-recognition
# setting: games
# hint: Compare an example's first letter with its coded letter to find the shift, confirm that shift on the other letters, and wrap from the end of the alphabet back to the start.
import random
import re
import string


class CaesarShiftEnv:
    WORDS = ["apple", "river", "stone", "cloud", "tiger", "bread", "lemon", "house", "plant", "music",
             "chair", "light", "ocean", "zebra", "quiet", "water", "night", "sugar", "money", "grape"]
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    @staticmethod
    def _shift(word, k):
        abc = string.ascii_lowercase
        return "".join(abc[(abc.index(ch) + k) % 26] for ch in word)

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        k = rng.randint(1, 25)
        words = rng.sample(self.WORDS, 3)
        self.decode = rng.random() < 0.4
        examples = "\n".join(f"{w} -> {self._shift(w, k)}" for w in words[:2])
        target = words[2]
        if self.decode:
            question = f"What plain word is encoded as {self._shift(target, k)}?"
            self.answer = target
        else:
            question = f"How is {target} encoded?"
            self.answer = self._shift(target, k)
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A secret code replaces every letter by another letter according to one fixed rule. Examples:\n{examples}\n"
            f"{question} Put the word in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
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
        if not guess:
            msg = "Put a single word inside \\boxed{...}."
        else:
            right = sum(a == b for a, b in zip(guess, self.answer))
            msg = f"Not right: {right} of {len(self.answer)} letters are correct and in place."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
