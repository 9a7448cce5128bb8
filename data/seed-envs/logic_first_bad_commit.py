# skill: logical-deduction
# setting: games
# hint: Once a commit fails every later commit fails too, so the first bad commit lies just after the last passing one and at or before the first failing one.
import random
import re


class FirstBadCommitEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        n = rng.randint(10, 30)
        bad = rng.randint(2, n)
        tested = {bad - 1, bad}
        while len(tested) < 5:
            tested.add(rng.randint(1, n))
        lines = ""
        for c in sorted(tested):
            result = "FAIL" if c >= bad else "pass"
            lines += f"- commit {c}: {result}\n"
        self.answer = str(bad)
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A project has commits 1 to {n}. A bug entered at one commit and stayed in every later commit. "
            f"The test suite was run on some commits:\n{lines}"
            "Which commit introduced the bug? Answer like \\boxed{7}. You have 2 attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = boxed[-1].strip() if boxed else ""
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"Wrong: the answer was commit {self.answer}.", 0.0, True, False, {"success": False}
        return "Wrong, try again.", 0.0, False, False, {"success": False}
