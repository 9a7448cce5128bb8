# skill: logical-deduction
# setting: games
# hint: List every way to split the six students into three pairs, cross out each split that breaks a clue, and read the partner off what remains.
import random
import re


class LabPartnersEnv:
    NAMES = ["Ava", "Ben", "Cai", "Dee", "Eli", "Fay"]

    def __init__(self):
        self.reset()

    def _pairings(self, people):
        if not people:
            return [[]]
        result = []
        for other in people[1:]:
            rest = [p for p in people[1:] if p != other]
            for tail in self._pairings(rest):
                result.append([(people[0], other)] + tail)
        return result

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        names = rng.sample(self.NAMES, 6)
        truth = [tuple(sorted(names[i:i + 2])) for i in (0, 2, 4)]
        self.who = rng.choice(self.NAMES)
        worlds, clues = self._pairings(self.NAMES), []
        while len({p for w in worlds for p in w if self.who in p}) > 1:
            pair = tuple(sorted(rng.sample(self.NAMES, 2)))
            if pair in truth or pair in clues:
                continue
            clues.append(pair)
            worlds = [w for w in worlds if pair not in w]
        mate = [p for p in truth if self.who in p][0]
        self.answer = mate[1] if mate[0] == self.who else mate[0]
        self.done, self.won = False, False
        obs = (
            "Ava, Ben, Cai, Dee, Eli and Fay work in three lab pairs.\n"
            + "\n".join(f"- {a} and {b} are not partners." for a, b in clues)
            + f"\nWho is {self.who}'s partner? Answer like \\boxed{{Name}}. You have one attempt."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.done = True
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = boxed[-1].strip().title() if boxed else ""
        if guess == self.answer:
            self.won = True
            return "Correct!", 1.0, True, False, {"success": True}
        return f"Wrong. It was {self.answer}.", 0.0, True, False, {"success": False}
