# skill: pattern-recognition
# setting: games
# hint: Line up input and output bit by bit; test flipping every bit, reversing, and rotating.
import random
import re


class BitTransformEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    @staticmethod
    def _apply(bits, op):
        if op == "flip":
            return "".join("1" if b == "0" else "0" for b in bits)
        if op == "reverse":
            return bits[::-1]
        return bits[1:] + bits[0]

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        ops = ["flip", "reverse", "rotate"]
        while True:
            op = rng.choice(ops)
            words = [format(n, "08b") for n in rng.sample(range(256), 3)]
            fits = [o for o in ops if all(self._apply(w, o) == self._apply(w, op) for w in words[:2])]
            if len(fits) == 1 and self._apply(words[2], op) != words[2]:
                break
        examples = [f"{w} -> {self._apply(w, op)}" for w in words[:2]]
        self.answer = self._apply(words[2], op)
        self.tries, self.done, self.won = 0, False, False
        obs = (
            "A bit operation changes 8-bit values like this:\n" + "\n".join(examples)
            + f"\nWhat does it turn {words[2]} into? Put the 8 bits in \\boxed{{...}}. "
            f"You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = re.sub(r"[^01]", "", boxed[-1]) if boxed else ""
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Put 8 bits inside \\boxed{...}." if not guess else f"{guess} is wrong."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
