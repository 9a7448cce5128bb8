# skill: logical-deduction
# setting: games
# hint: Chain rules forward from the true facts; for the false fact use the contrapositive, so a letter whose rule leads to a false letter is false. A letter reached by neither chain is undecided.
import random
import re


class ImplicationChainEnv:
    ATOMS = "PQRSTUV"

    def __init__(self):
        self.reset()

    @staticmethod
    def _closure(start, edges):
        seen, todo = set(start), list(start)
        while todo:
            x = todo.pop()
            for a, b in edges:
                if a == x and b not in seen:
                    seen.add(b)
                    todo.append(b)
        return seen

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        want = rng.choice(["yes", "no", "unknown"])
        while True:
            count, rules = rng.randint(5, 7), []
            while len(rules) < count:
                rule = tuple(rng.sample(self.ATOMS, 2))
                if rule not in rules:
                    rules.append(rule)
            t, f = rng.sample(self.ATOMS, 2)
            true = self._closure({t}, rules)
            false = self._closure({f}, [(b, a) for a, b in rules])
            if true & false:
                continue
            label = lambda x: "yes" if x in true else "no" if x in false else "unknown"
            options_ = [x for x in self.ATOMS if x not in (t, f) and label(x) == want]
            if options_:
                break
        self.query, self.answer = rng.choice(options_), want
        self.done, self.won = False, False
        lines = "\n".join(f"- If {a} is true, then {b} is true." for a, b in rules)
        obs = (
            f"Each letter stands for a statement that is either true or false. Rules:\n{lines}\n"
            f"Facts: {t} is true. {f} is false.\n"
            f"Is {self.query} true? Answer \\boxed{{yes}}, \\boxed{{no}} (it must be false) or "
            "\\boxed{unknown} (the rules and facts do not decide it). You have one attempt."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        word = boxed[-1].strip().lower().rstrip(".") if boxed else ""
        word = {"true": "yes", "false": "no", "cannot be determined": "unknown", "undetermined": "unknown"}.get(word, word)
        self.done = True
        if word == self.answer:
            self.won = True
            return "Correct!", 1.0, True, False, {"success": True}
        if word not in ("yes", "no", "unknown"):
            return "No valid answer (yes, no or unknown) was given. Episode over.", 0.0, True, False, {"success": False}
        return f"Wrong: the correct answer was {self.answer}.", 0.0, True, False, {"success": False}
