# skill: pattern-recognition
# setting: games
# hint: Test each way of ordering on the example: alphabetical, by word length, or by last letter.
import random
import re


class SortKeyEnv:
    WORDS = ["fig", "plum", "apple", "banana", "cherry", "kiwi", "melon", "grape",
             "apricot", "coconut", "pear", "mango", "peach", "blueberry"]
    KEYS = {"alphabetical": lambda w: w, "length": len, "last letter": lambda w: w[-1]}
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        while True:
            key = self.KEYS[rng.choice(sorted(self.KEYS))]
            words = rng.sample(self.WORDS, 7)
            ex, ask = words[:4], words[4:]
            fits = [k for k in self.KEYS.values() if sorted(ex, key=k) == sorted(ex, key=key)]
            if len(fits) == 1 and len(set(map(key, ex))) + len(set(map(key, ask))) == 7:
                break
        self.answer = ",".join(sorted(ask, key=key))
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A program sorts words by a hidden rule: sort({', '.join(ex)}) = {', '.join(sorted(ex, key=key))}\n"
            f"What is sort({', '.join(ask)})? Put the words, comma-separated, in \\boxed{{...}}. "
            f"You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = ",".join(re.findall(r"[a-z]+", boxed[-1].lower())) if boxed else ""
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Put the words inside \\boxed{...}." if not guess else "That order is not right."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
