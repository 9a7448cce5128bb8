# skill: causal-inference
# setting: games
# hint: The chain stops at the missing piece, so only the pushed domino and the ones between it and the gap fall.
import random
import re


class DominoGapEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.answer, push = rng.randint(1, 6), rng.randint(1, 3)
        gap = push + self.answer
        n = gap + rng.randint(0, 3)
        self.tries, self.done, self.won = 0, False, False
        obs = (f"Dominoes numbered 1 to {n} stand in a row; each one that falls knocks over the next.\n"
               f"Domino {gap} was taken away. You push domino {push} forward.\n"
               "How many dominoes fall? Answer as \\boxed{NUMBER}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        box = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"-?[0-9]+", box[-1] if box else str(action))
        guess = int(nums[-1]) if nums and len(nums[-1]) < 7 else None
        if guess == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        if guess is None:
            msg = "Give one whole number."
        else:
            msg = f"{guess} is too {'many' if guess > self.answer else 'few'}."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" Out of tries; {self.answer} fall." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}
