# skill: logical-deduction
# setting: games
# hint: List all eight settings of the three flags and cross out every setting that breaks a clue; an AND equal to 1 or an OR equal to 0 fixes both flags.
import random
import re


class BitCluesEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    @staticmethod
    def _apply(op, x, y):
        if op == "AND":
            return x & y
        if op == "OR":
            return x | y
        return x ^ y

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        bits = [rng.randint(0, 1) for _ in range(3)]
        worlds = [[a, b, c] for a in (0, 1) for b in (0, 1) for c in (0, 1)]
        clues = []
        while len(worlds) > 1:
            i, j = sorted(rng.sample(range(3), 2))
            op = rng.choice(["AND", "OR", "XOR"])
            clue = (i, op, j, self._apply(op, bits[i], bits[j]))
            keep = [w for w in worlds if self._apply(op, w[i], w[j]) == clue[3]]
            if len(keep) < len(worlds):
                clues.append(clue)
                worlds = keep
        self.answer = "".join(str(b) for b in bits)
        self.tries, self.done, self.won = 0, False, False
        lines = "\n".join(f"- {'abc'[i]} {op} {'abc'[j]} == {v}" for i, op, j, v in clues)
        obs = (
            f"A program has flags a, b and c (1 is True, 0 is False). It logged:\n{lines}\n"
            "What are a, b and c? Answer as three digits in order, e.g. \\boxed{010}. You have 2 attempts."
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
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"Wrong, {self.answer}.", 0.0, True, False, {"success": False}
        return "Wrong, try again.", 0.0, False, False, {"success": False}
