# skill: logical-deduction
# setting: games
# hint: Test the conditions from top to bottom with the given value; the first condition that is true decides the branch and the rest are skipped.
import random
import re


class BranchTraceEnv:
    MAX_TRIES = 1

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        x = rng.randint(-20, 40)
        conds = []
        while len(conds) < 3:
            kind = rng.choice(["gt", "lt", "mod"])
            if kind == "gt":
                k = rng.randint(-10, 30)
                conds.append((f"x > {k}", x > k))
            elif kind == "lt":
                k = rng.randint(-10, 30)
                conds.append((f"x < {k}", x < k))
            else:
                m = rng.randint(2, 5)
                conds.append((f"x % {m} == 0", x % m == 0))
        labels = rng.sample(["A", "B", "C", "D"], 4)
        code = f"x = {x}\n"
        self.answer = labels[3]
        for i, (text, ok) in enumerate(conds):
            code += f"{'if' if i == 0 else 'elif'} {text}:\n    print('{labels[i]}')\n"
            if ok and self.answer == labels[3]:
                self.answer = labels[i]
        code += f"else:\n    print('{labels[3]}')\n"
        self.done, self.won = False, False
        obs = (
            f"Read this Python code:\n{code}"
            "Which letter does it print? Answer like \\boxed{A}. You have one attempt."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = boxed[-1].strip().strip("'\"").upper() if boxed else ""
        self.done = True
        if guess == self.answer:
            self.won = True
            return "Correct!", 1.0, True, False, {"success": True}
        return f"Wrong: it prints {self.answer}.", 0.0, True, False, {"success": False}
