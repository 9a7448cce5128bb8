# skill: logical-deduction
# setting: games
# hint: Track the type line by line: / always gives a float, str() gives a str, len() gives an int and a comparison gives a bool.
import random
import re


class PythonTypesEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def _op(self, rng, var, t):
        if t == "str":
            ops = [(f"len({var})", "int"), (f"{var} + 'x'", "str"), (f"{var} == 'ab'", "bool")]
        elif t == "bool":
            ops = [(f"int({var})", "int"), (f"str({var})", "str"), (f"not {var}", "bool")]
        else:
            ops = [(f"{var} / 2", "float"), (f"{var} + 1", t), (f"{var} > 3", "bool"), (f"str({var})", "str")]
        return rng.choice(ops)

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        t = rng.choice(["int", "float", "str"])
        start = {"int": "7", "float": "2.5", "str": "'ab'"}[t]
        code = f"v0 = {start}\n"
        for i in range(1, rng.randint(3, 5)):
            expr, t = self._op(rng, f"v{i - 1}", t)
            code += f"v{i} = {expr}\n"
        self.last, self.answer = f"v{i}", t
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"Python code:\n{code}"
            f"What is the type of {self.last}? Answer int, float, str or bool, "
            "like \\boxed{int}. You have 2 attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = boxed[-1].strip().lower() if boxed else ""
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"Wrong: it is {self.answer}.", 0.0, True, False, {"success": False}
        return "Wrong, try again.", 0.0, False, False, {"success": False}
