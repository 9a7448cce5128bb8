# skill: causal-inference
# setting: games
# hint: Trace backwards from out: each line depends on the names on its right side, so follow them until you reach the inputs; lines that out never reads do not matter.
import random
import re


class ProgramSliceEnv:
    INPUTS = ["a", "b", "c", "d"]
    TEMPS = ["t1", "t2", "t3", "t4", "out"]
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        while True:
            deps = {name: {name} for name in self.INPUTS}
            lines = []
            for i, t in enumerate(self.TEMPS):
                x, y = rng.sample(self.INPUTS + self.TEMPS[:i], 2)
                op = rng.choice(["+", "-", "*"])
                lines.append(f"{t} = {x} {op} {y}")
                deps[t] = deps[x] | deps[y]
            if 1 <= len(deps["out"]) <= 3:
                break
        self.answer = sorted(deps["out"])
        self.tries, self.done, self.won = 0, False, False
        obs = (
            "A program reads four inputs a, b, c, d and runs:\n" + "\n".join(lines)
            + "\nChanging which inputs can change the value of out? Assume every operation depends on both of its "
            f"operands. List them like \\boxed{{a, c}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        words = re.findall(r"[a-z]+", boxed[-1].lower()) if boxed else []
        guess = sorted(set(w for w in words if w in self.INPUTS))
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Not quite; some input is missing or extra."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; out depends on {', '.join(self.answer)}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
