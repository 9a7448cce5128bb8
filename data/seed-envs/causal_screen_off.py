# skill: causal-inference
# setting: games
# hint: If every path between two variables runs through one middle variable, holding that middle variable fixed cuts the link; follow the arrows from the first to the second.
import random
import re


class ScreenOffEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        names = ["sun", "heat", "ice", "sales", "thirst", "wind", "crowds", "shade"]
        x, m, y, d, e, f = rng.sample(names, 6)
        edges = [(x, m), (m, y), (d, x), (e, m), (y, f), (d, e)]
        self.answer = m
        self.names = sorted([x, m, y, d, e, f])
        shown = rng.sample(edges, len(edges))
        obs = (
            f"A causal diagram has variables {', '.join(self.names)}. Each arrow means 'directly causes':\n"
            + "\n".join(f"- {a} -> {b}" for a, b in shown)
            + f"\n{x} and {y} are correlated. Which single variable, if held fixed, would make {x} and {y} "
            f"independent? Put its name in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        self.tries, self.done, self.won = 0, False, False
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
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Name exactly one option inside \\boxed{...}." if guess is None else f"{guess} is not right."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
