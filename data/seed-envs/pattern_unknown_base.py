# skill: pattern-recognition
# setting: games
# hint: The robot writes numbers in another base; find the base from the examples (for instance the smallest number written as 10), then convert the asked number by repeated division.
import random
import re


class UnknownBaseEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    @staticmethod
    def _write(n, base):
        digits = ""
        while n > 0:
            digits = str(n % base) + digits
            n //= base
        return digits

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        base = rng.randint(3, 9)
        shown = sorted(rng.sample(range(2, 30), 4))
        examples = [f"{n} -> {self._write(n, base)}" for n in shown]
        target = rng.randint(30, 150)
        self.answer = self._write(target, base)
        self.tries, self.done, self.won = 0, False, False
        obs = (
            "A robot writes ordinary numbers in its own way:\n" + "\n".join(examples)
            + f"\nHow does it write {target}? Put its digits in \\boxed{{...}}. "
            f"You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = re.sub(r"[^0-9]", "", boxed[-1]) if boxed else ""
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Put your answer inside \\boxed{...}." if not guess else f"{guess} is not right."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
