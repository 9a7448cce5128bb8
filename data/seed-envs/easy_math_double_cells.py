# skill: mathematical-reasoning
# setting: games
# hint: Splitting in two doubles the count, so add the starting number to itself.
import random
import re


class DoubleCellsEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        start = rng.randint(1, 10)
        thing = rng.choice(["bacteria", "yeast cells", "amoebas", "algae cells"])
        self.answer = 2 * start
        self.tries, self.done, self.won = 0, False, False
        obs = (f"A dish holds {start} {thing}. Each one splits into two.\n"
               f"How many {thing} are in the dish after the split?\n"
               "Give the number as \\boxed{NUMBER}. 3 tries allowed.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        text = str(action)
        if "\\boxed{" in text:
            text = text.rsplit("\\boxed{", 1)[1]
        nums = [int(x) for x in re.findall(r"-?\d+", text) if len(x) < 7]
        guess = nums[-1] if nums else None
        if guess == self.answer:
            self.done = self.won = True
            reward = 1.0 if self.tries == 1 else (0.6 if self.tries == 2 else 0.3)
            return "Correct!", reward, True, False, {"success": True}
        if guess is None:
            fb = "Please give a number."
        elif guess > self.answer:
            fb = f"{guess} is too high."
        else:
            fb = f"{guess} is too low."
        over = self.tries >= self.MAX_TRIES
        self.done = over
        if over:
            fb += f" It was {self.answer}."
        return fb, 0.0, over, False, {"success": False}
