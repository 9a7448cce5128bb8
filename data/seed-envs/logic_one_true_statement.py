# skill: logical-deduction
# setting: games
# hint: Try each suspect as the culprit in turn and count how many statements would then be true; keep only the suspect for whom the count matches what you are told.
import random
import re


class OneTrueStatementEnv:
    NAMES = ["Ana", "Ben", "Cleo", "Dev"]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        need = rng.choice([1, 3])
        while True:
            stmts = [(rng.choice(["did", "not"]), rng.randrange(4)) for _ in range(4)]
            fits = []
            for c in range(4):
                true = sum((c == x) == (kind == "did") for kind, x in stmts)
                if true == need:
                    fits.append(c)
            if len(fits) == 1:
                break
        self.answer = self.NAMES[fits[0]].lower()
        self.done, self.won = False, False
        lines = []
        for s, (kind, x) in enumerate(stmts):
            who = "I" if x == s else self.NAMES[x]
            verb = "did it" if kind == "did" else "did not do it"
            lines.append(f"{self.NAMES[s]}: \"{who} {verb}.\"")
        obs = (
            "Someone pushed a commit that broke the build. Exactly one of Ana, Ben, Cleo and Dev did it.\n"
            + "\n".join(lines) + f"\nExactly {need} of these four statements {'is' if need == 1 else 'are'} true.\n"
            "Who broke the build? Answer like \\boxed{Ana}. You have one attempt."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.done = True
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = boxed[-1].strip().lower() if boxed else ""
        if guess == self.answer:
            self.won = True
            return "Correct!", 1.0, True, False, {"success": True}
        return f"Wrong. It was {self.answer.title()}.", 0.0, True, False, {"success": False}
