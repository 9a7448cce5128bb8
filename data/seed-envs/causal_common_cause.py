# skill: causal-inference
# setting: games
# hint: A common cause has an arrow into both named variables; check each variable that points to the first one and see whether it also points to the second.
import random
import re


class CommonCauseEnv:
    NAMES = ["rain", "traffic", "humidity", "noise", "pollen", "stress", "sleep", "smog"]
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        c, x, y, d, e, f = rng.sample(self.NAMES, 6)
        edges = [(c, x), (c, y), (d, x), (e, y), (y, f)]
        if rng.random() < 0.5:
            edges.append((x, y))
        self.answer = c
        self.names = sorted([c, x, y, d, e, f])
        self.tries, self.done, self.won = 0, False, False
        shown = rng.sample(edges, len(edges))
        obs = (
            f"A causal diagram has variables {', '.join(self.names)}. Each arrow means 'directly causes':\n"
            + "\n".join(f"- {a} -> {b}" for a, b in shown)
            + f"\nA study finds that {x} and {y} are correlated. Which single variable is a common cause "
            f"of both {x} and {y}? Put its name in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        words = [w for w in re.findall(r"[a-z]+", boxed[-1].lower()) if w in self.names] if boxed else []
        guess = words[0] if len(set(words)) == 1 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct, that is the common cause!", 1.0, True, False, {"success": True}
        msg = "Name exactly one variable inside \\boxed{...}." if guess is None else f"{guess} is not a cause of both."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; it was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
