# skill: logical-deduction
# setting: games
# hint: Each animal has exactly one owner, so the third person gets the one animal nobody else owns.
import random
import re


class PetOwnerEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        people = rng.sample(["Ann", "Ben", "Cara", "Dev", "Ella"], 3)
        pets = rng.sample(["cat", "dog", "fish", "bird", "frog", "newt"], 3)
        self.answer = pets[2]
        self.options = sorted(pets)
        self.tries, self.done, self.won = 0, False, False
        obs = (f"{', '.join(people)} each own one pet: a {self.options[0]}, a {self.options[1]}, a {self.options[2]}.\n"
               f"{people[0]} owns the {pets[0]}. {people[1]} owns the {pets[1]}.\n"
               f"Which pet does {people[2]} own? Answer as \\boxed{{PET}}. You have 3 tries.")
        return obs, {}

    def _guess(self, action):
        text = str(action).lower()
        start = text.rfind("\\boxed{")
        text = text[max(start, 0):]
        pets = [w for w in re.findall(r"[a-z]+", text) if w in self.options]
        return pets[-1] if pets else None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        g = self._guess(action)
        if g == self.answer:
            self.done = self.won = True
            return "Correct!", (1.0, 0.6, 0.3)[self.tries - 1], True, False, {"success": True}
        msg = "Name one pet." if g is None else f"No, not the {g}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            msg += f" It was the {self.answer}."
        return msg, 0.0, self.done, False, {"success": False}
