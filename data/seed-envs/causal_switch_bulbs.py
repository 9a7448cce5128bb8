# skill: causal-inference
# setting: games
# hint: Intervene on one switch at a time and watch which bulb changes; a bulb that changes when only one switch moved is wired to that switch. Once all but one pairing is known, the last one follows without testing.
import random
import re


class SwitchBulbsEnv:
    COLOURS = ["red", "blue", "green", "amber", "white", "violet", "pink"]
    MAX_STEPS = 7

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.n = rng.randint(3, 5)
        self.bulbs = rng.sample(self.COLOURS, self.n)
        self.wiring = rng.sample(self.bulbs, self.n)
        self.on = [False] * self.n
        self.steps, self.done, self.won = 0, False, False
        obs = (
            f"A panel has {self.n} switches numbered 1 to {self.n}, all off, and {self.n} bulbs {', '.join(self.bulbs)}, all dark. "
            "Each switch controls exactly one bulb, but the wiring is hidden. Each turn, either flip one switch "
            "with \\boxed{flip N} and see the bulbs, or give the wiring with \\boxed{answer colour, colour, ...}, listing the bulb "
            f"of switch 1, then switch 2, and so on. The answer ends the game. You have {self.MAX_STEPS} turns."
        )
        return obs, {}

    def _lit(self):
        lit = [self.wiring[i] for i in range(self.n) if self.on[i]]
        return ", ".join(b for b in self.bulbs if b in lit) or "none"

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        text = boxed[-1].strip().lower() if boxed else ""
        flip = re.fullmatch(r"flip\s*(?:switch\s*)?(\d{1,2})", text)
        if text.startswith("answer"):
            guess = [w for w in re.findall(r"[a-z]+", text[6:]) if w in self.bulbs]
            self.done, self.won = True, guess == self.wiring
            msg = "Correct wiring!" if self.won else f"Wrong; the wiring was {', '.join(self.wiring)}."
            return msg, float(self.won), True, False, {"success": self.won}
        if flip and 1 <= int(flip.group(1)) <= self.n:
            k = int(flip.group(1)) - 1
            self.on[k] = not self.on[k]
            msg = f"Switch {k + 1} is now {'on' if self.on[k] else 'off'}. Lit bulbs: {self._lit()}."
        else:
            msg = f"Use \\boxed{{flip N}} with N from 1 to {self.n}, or \\boxed{{answer ...}}."
        left = self.MAX_STEPS - self.steps
        self.done = left <= 0
        return f"{msg} Turns left: {left}.", 0.0, False, self.done, {"success": False}
