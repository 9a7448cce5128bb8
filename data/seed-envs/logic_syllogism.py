# skill: logical-deduction
# setting: games
# hint: A conclusion follows only if it holds in every possible case; try to draw circles for the groups that make both premises true but the conclusion false.
import random
import re


class SyllogismEnv:
    GROUPS = ["wugs", "blickets", "daxes", "feps", "toves", "glorps"]
    FORMS = [
        ("All {a} are {b}.", "All {b} are {c}.", "All {a} are {c}.", "yes"),
        ("All {a} are {b}.", "No {b} are {c}.", "No {a} are {c}.", "yes"),
        ("Some {a} are {b}.", "All {b} are {c}.", "Some {a} are {c}.", "yes"),
        ("All {a} are {b}.", "All {c} are {b}.", "All {a} are {c}.", "no"),
        ("All {a} are {b}.", "Some {b} are {c}.", "Some {a} are {c}.", "no"),
        ("No {a} are {b}.", "No {b} are {c}.", "No {a} are {c}.", "no"),
        ("All {b} are {a}.", "All {b} are {c}.", "All {a} are {c}.", "no"),
    ]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        a, b, c = rng.sample(self.GROUPS, 3)
        p1, p2, concl, self.answer = rng.choice(self.FORMS)
        premises = [p1.format(a=a, b=b, c=c), p2.format(a=a, b=b, c=c)]
        rng.shuffle(premises)
        self.done, self.won = False, False
        obs = (
            f"Premises about made-up creatures (take both as true):\n- {premises[0]}\n- {premises[1]}\n"
            f"Does it follow that: {concl.format(a=a, b=b, c=c)}\n"
            "Answer \\boxed{yes} if it must be true, or \\boxed{no} if it need not be. You have one attempt."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = boxed[-1].strip().lower() if boxed else ""
        self.done = True
        if guess == self.answer:
            self.won = True
            return "Correct!", 1.0, True, False, {"success": True}
        return f"Wrong: the answer was {self.answer}.", 0.0, True, False, {"success": False}
