# skill: causal-inference
# setting: games
# hint: A collider receives arrows from both variables; the two are unrelated until a study selects or conditions on the collider.
import random
import re


class ColliderSpotEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        names = ["talent", "luck", "grades", "income", "fame", "health", "effort", "age"]
        c, x, y, d, e, f = rng.sample(names, 6)
        edges = [(x, c), (y, c), (d, x), (e, y), (c, f), (d, f)]
        self.answer = c
        self.names = sorted([c, x, y, d, e, f])
        shown = rng.sample(edges, len(edges))
        obs = (
            f"A causal diagram has variables {', '.join(self.names)}. Each arrow means 'directly causes':\n"
            + "\n".join(f"- {a} -> {b}" for a, b in shown)
            + f"\nA survey only includes people selected on one variable, and then {x} and {y} look related. "
            f"Which variable has arrows coming in from both {x} and {y}? Put its name in \\boxed{{...}}. "
            f"You have {self.MAX_TRIES} attempts."
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
