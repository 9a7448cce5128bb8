# skill: pattern-recognition
# setting: games
# hint: Number the letters by their place in the alphabet (a=1, b=2, ...) and test sums, first and last letters, and the word length.
import random
import re


class WordScoresEnv:
    WORDS = ["cat", "dog", "bird", "fish", "lamp", "book", "tree", "moon", "star", "milk", "ship", "sun"]
    RULES = {
        "sum": lambda w: sum(ord(ch) - 96 for ch in w),
        "ends": lambda w: ord(w[0]) + ord(w[-1]) - 192,
        "first": lambda w: (ord(w[0]) - 96) * len(w),
    }
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        while True:
            rule = self.RULES[rng.choice(sorted(self.RULES))]
            words = rng.sample(self.WORDS, 4)
            fits = [f for f in self.RULES.values() if all(f(w) == rule(w) for w in words[:3])]
            if len({f(words[3]) for f in fits}) == 1:
                break
        self.answer = rule(words[3])
        lines = "\n".join(f"{w} = {rule(w)}" for w in words[:3])
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"One rule gives every word a score:\n{lines}\n"
            f"What is the score of {words[3]}? Answer in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 6 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Put one number in \\boxed{...}." if guess is None else "Wrong."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; it was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
