# skill: pattern-recognition
# setting: games
# hint: In the example every letter is different, so for each output place find which input place its letter came from, then move the letters of the new word the same way.
import random
import re


class FixedShuffleEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        perm = list(range(6))
        while perm == sorted(perm):
            rng.shuffle(perm)
        sample = rng.sample("abcdefghijklmnopqrstuvwxyz", 6)
        word = [rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(6)]
        out = "".join(sample[p] for p in perm)
        self.answer = "".join(word[p] for p in perm)
        self.tries, self.done, self.won = 0, False, False
        obs = (
            "A shuffle machine always moves letters between the same places:\n"
            f"{''.join(sample)} -> {out}\n"
            f"What does it make of {''.join(word)}? Put the result in \\boxed{{...}}. "
            f"You have {self.MAX_TRIES} attempts."
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
