# skill: pattern-recognition
# setting: games
# hint: Convert each binary number to decimal, find the rule that links neighbouring values, work out the next value in decimal and convert it back to binary.
import random
import re


class BinaryCounterEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        seq = [rng.randint(1, 12)]
        kind = rng.choice(["add", "add", "double"])
        step = rng.randint(3, 9) if kind == "add" else rng.randint(0, 1)
        while len(seq) < 6:
            if kind == "add":
                seq.append(seq[-1] + step)
            else:
                seq.append(seq[-1] * 2 + step)
        shown = ", ".join(bin(x)[2:] for x in seq[:5])
        self.answer = bin(seq[5])[2:]
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A program prints numbers in binary (base 2), following one rule:\n{shown}, ?\n"
            f"What does it print next, in binary? Put it in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = re.sub(r"\s", "", boxed[-1]) if boxed else ""
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if not re.fullmatch(r"[01]+", guess):
            msg = "Put a binary number made of 0s and 1s inside \\boxed{...}."
        else:
            msg = f"{guess} is decimal {int(guess, 2)}, which does not follow the rule."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
