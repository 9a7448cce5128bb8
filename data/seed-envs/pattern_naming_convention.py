# skill: pattern-recognition
# setting: games
# hint: See how the words are joined (underscore or nothing) and which letters are capitals.
import random
import re


class NamingConventionEnv:
    PHRASES = ["user name", "total price", "max speed", "file path", "error count",
               "start time", "page size", "last login date"]
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    @staticmethod
    def _name(phrase, style):
        words = phrase.split()
        if style == "snake":
            return "_".join(words)
        if style == "constant":
            return "_".join(words).upper()
        if style == "pascal":
            return "".join(w.capitalize() for w in words)
        return words[0] + "".join(w.capitalize() for w in words[1:])

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        style = rng.choice(["snake", "constant", "pascal", "camel"])
        phrases = rng.sample(self.PHRASES, 3)
        examples = [f'"{p}" -> {self._name(p, style)}' for p in phrases[:2]]
        self.answer = self._name(phrases[2], style)
        self.tries, self.done, self.won = 0, False, False
        obs = (
            "A team names variables in one fixed style:\n"
            + "\n".join(examples)
            + f'\nWhat do they name "{phrases[2]}"? Put it in \\boxed{{...}}. '
            f"You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = boxed[-1].strip() if boxed else ""
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Put the name inside \\boxed{...}." if not guess else "Wrong name."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
