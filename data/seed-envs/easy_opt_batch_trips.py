# skill: optimisation
# setting: games
# hint: Divide the total by how many fit in one trip and round up, because a part-full trip still counts.
import random
import re


class BatchTripsEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        cap = rng.randint(2, 6)
        count = rng.randint(cap + 1, cap * 6)
        self.answer = (count + cap - 1) // cap
        what, mover = rng.choice([("books", "cart trip"), ("files", "upload"), ("crates", "lift ride")])
        self.tries, self.done, self.won = 0, False, False
        obs = (f"You must move {count} {what}. One {mover} takes at most {cap} {what}.\n"
               f"What is the fewest number of {mover}s needed?\n"
               "Answer as \\boxed{NUMBER}. 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        box = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        digits = re.findall(r"[0-9]+", box[-1] if box else str(action))
        trips = int(digits[-1]) if digits and len(digits[-1]) < 7 else None
        if trips == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = "Give a number." if trips is None else f"{trips} is too {'many' if trips > self.answer else 'few'}."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" Out of tries; it was {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}
