# skill: causal-inference
# setting: games
# hint: Flip one input at a time, keep the others fixed, and recompute the rule; the input is a but-for cause if the output flips.
import random
import re


class ButForInputsEnv:
    NAMES = ["door", "smoke", "armed", "motion", "timer", "window"]

    def __init__(self):
        self.reset()

    def _out(self, v):
        x, y, z = v
        inner = (x and y) if self.op_in == "and" else (x or y)
        return (inner and z) if self.op_out == "and" else (inner or z)

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.names = rng.sample(self.NAMES, 3)
        self.op_in, self.op_out = rng.choice(["and", "or"]), rng.choice(["and", "or"])
        self.vals = [rng.random() < 0.6 for _ in range(3)]
        alarm = self._out(self.vals)
        self.answer = set()
        for i in range(3):
            flipped = list(self.vals)
            flipped[i] = not flipped[i]
            if self._out(flipped) != alarm:
                self.answer.add(self.names[i])
        x, y, z = self.names
        facts = ", ".join(f"{n} = {v}" for n, v in zip(self.names, self.vals))
        self.done, self.won = False, False
        obs = (
            f"A program computes: alarm = ({x} {self.op_in} {y}) {self.op_out} {z}\n"
            f"Today {facts}, so alarm = {alarm}. Which inputs are but-for causes: changing only that input "
            "would change the alarm? List them in \\boxed{...} separated by "
            "commas, or write \\boxed{none}. You have one attempt."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.done = True
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        words = re.findall(r"[a-z]+", boxed[-1].lower()) if boxed else []
        guess = {w for w in words if w in self.names}
        self.won = (bool(guess) or "none" in words) and guess == self.answer
        msg = "Correct!" if self.won else f"Wrong; the answer was {sorted(self.answer) or 'none'}."
        return msg, float(self.won), True, False, {"success": self.won}
