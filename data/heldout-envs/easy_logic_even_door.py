# skill: logical-deduction
# setting: games
# hint: Test each door number: it is even when it splits into two equal whole halves, odd otherwise.
import random
import re


class EvenDoorEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        kind = rng.choice(["even", "odd"])
        want = 0 if kind == "even" else 1
        self.answer = rng.choice([n for n in range(1, 21) if n % 2 == want])
        others = rng.sample([n for n in range(1, 21) if n % 2 != want], 2)
        self.options = rng.sample([self.answer] + others, 3)
        self.tries, self.done, self.won = 0, False, False
        obs = (f"The prize is behind the only door with an {kind} number.\n"
               f"Doors: {', '.join(map(str, self.options))}.\n"
               "Which door? Answer as \\boxed{NUMBER}; 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        part = str(action)
        box = part.rfind("\\boxed{")
        digits = re.findall(r"\d+", part[box:] if box >= 0 else part)
        door = int(digits[-1]) if digits and len(digits[-1]) < 5 else None
        if door == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        text = f"Door {door} is {'odd' if door % 2 else 'even'}; not it." if door in self.options else "Pick a door."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{text} It was door {self.answer}.", 0.0, True, False, {"success": False}
        return text, 0.0, False, False, {"success": False}
