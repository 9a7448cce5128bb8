# skill: pattern-recognition
# setting: games
# hint: Line up each input with its output letter by letter and ask whether letters were reversed, moved, repeated, dropped or sorted; make sure your rule explains every example before applying it to the new word.
import random
import re


class StringRuleEnv:
    WORDS = ["planet", "garden", "silver", "market", "window", "candle", "forest", "bright", "jungle",
             "stamp", "crown", "flute", "brick", "ghost", "mango", "tulip", "cabin", "drum", "wolf", "kite"]
    RULES = {
        "reverse": lambda w: w[::-1],
        "double": lambda w: "".join(ch * 2 for ch in w),
        "rotate": lambda w: w[1:] + w[0],
        "swap ends": lambda w: w[-1] + w[1:-1] + w[0],
        "drop vowels": lambda w: "".join(ch for ch in w if ch not in "aeiou"),
        "sort": lambda w: "".join(sorted(w)),
        "mirror": lambda w: w + w[::-1],
    }
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        while True:
            rule = rng.choice(sorted(self.RULES))
            words = rng.sample(self.WORDS, 4)
            fits = [f for f in self.RULES.values() if all(f(w) == self.RULES[rule](w) for w in words[:3])]
            if len({f(words[3]) for f in fits}) == 1:
                break
        self.answer = self.RULES[rule](words[3])
        self.tries, self.done, self.won = 0, False, False
        examples = "\n".join(f"{w} -> {self.RULES[rule](w)}" for w in words[:3])
        obs = (
            f"The same rule turns each word on the left into the word on the right:\n{examples}\n"
            f"Apply the rule to {words[3]}. Put the result in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
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
            msg = "Put the resulting letters inside \\boxed{...}."
        elif len(guess) != len(self.answer):
            msg = f"Not right; the answer has {len(self.answer)} letters, you gave {len(guess)}."
        else:
            msg = f"Not right: {sum(a == b for a, b in zip(guess, self.answer))} of {len(guess)} letters are in place."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
