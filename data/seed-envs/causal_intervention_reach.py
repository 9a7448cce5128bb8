# skill: causal-inference
# setting: games
# hint: Forcing a variable only affects what lies downstream of it: follow the arrows forward from it and collect everything you reach; nothing upstream changes.
import random
import re


class InterventionReachEnv:
    NAMES = ["alpha", "beta", "gamma", "delta", "kappa", "sigma"]
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        order = rng.sample(self.NAMES, 6)
        self.edges = sorted({(a, b) for a, b in (sorted(rng.sample(range(6), 2)) for _ in range(7))})
        self.edges = [(order[a], order[b]) for a, b in self.edges]
        causes = sorted({a for a, _ in self.edges})
        self.target = rng.choice(causes) if rng.random() < 0.85 else rng.choice(order)
        self.answer = set()
        todo = [self.target]
        while todo:
            x = todo.pop()
            for a, b in self.edges:
                if a == x and b not in self.answer:
                    self.answer.add(b)
                    todo.append(b)
        self.variables = sorted(order)
        self.tries, self.done, self.won = 0, False, False
        shown = rng.sample(self.edges, len(self.edges))
        obs = (
            f"A causal model has variables {', '.join(self.variables)}. Each arrow means 'directly causes':\n"
            + "\n".join(f"- {a} -> {b}" for a, b in shown)
            + f"\nAn experimenter forces {self.target} to a new value. Which other variables could change as a result? "
            "List them inside \\boxed{...} separated by commas, or write \\boxed{none}. "
            f"You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        words = re.findall(r"[a-z]+", boxed[-1].lower()) if boxed else []
        guess = {w for w in words if w in self.variables}
        valid = bool(words) and all(w in self.variables or w in ("and", "none") for w in words)
        if valid and guess == self.answer and (guess or "none" in words):
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if not valid or not (guess or "none" in words):
            msg = "List variable names inside \\boxed{...}, or \\boxed{none}."
        else:
            msg = f"Not right: you missed {len(self.answer - guess)} and wrongly included {len(guess - self.answer)}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
