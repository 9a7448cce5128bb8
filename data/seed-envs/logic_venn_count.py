# skill: logical-deduction
# setting: games
# hint: Students in both classes were counted twice in the two class totals, so add the totals, subtract the overlap, and take that from the whole group.
import random
import re


class VennCountEnv:
    SUBJECTS = ["physics", "chemistry", "biology", "coding", "statistics"]
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        s1, s2 = rng.sample(self.SUBJECTS, 2)
        both = rng.randint(1, 8)
        only1 = rng.randint(1, 10)
        only2 = rng.randint(0, 10)
        neither = rng.randint(1, 10)
        total = both + only1 + only2 + neither
        ask = rng.choice(["neither", "only"])
        if ask == "neither":
            self.answer = str(neither)
            question = f"How many take neither {s1} nor {s2}?"
        else:
            self.answer = str(only1)
            question = f"How many take {s1} but not {s2}?"
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A class has {total} students. {both + only1} take {s1}, {both + only2} take {s2}, "
            f"and {both} take both.\n{question} Answer like \\boxed{{4}}. You have 2 attempts."
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
            return f"Wrong: the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return "Wrong, try again.", 0.0, False, False, {"success": False}
