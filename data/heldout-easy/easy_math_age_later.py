# skill: mathematical-reasoning
# setting: games
# hint: Each year adds one to the age: add the number of years to the age today.
import random
import re


class AgeLaterEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        name = rng.choice(["Mia", "Leo", "Zoe", "Sam", "Ada"])
        age, years = rng.randint(3, 15), rng.randint(2, 9)
        later = rng.random() < 0.6
        if not later:
            years = rng.randint(1, age - 1)
        self.answer = age + years if later else age - years
        when = f"in {years} years" if later else f"{years} years ago"
        self.tries, self.done, self.won = 0, False, False
        obs = (f"{name} is {age} years old today.\nHow old {'will' if later else 'was'} {name} "
               f"{'be ' if later else ''}{when}? Reply with \\boxed{{NUMBER}}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        text = str(action)
        box = re.findall(r"\\boxed\{([^{}]*)\}", text)
        found = re.findall(r"-?[0-9]+", box[-1] if box else text)
        n = int(found[-1]) if found and len(found[-1]) < 7 else None
        if n == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = "Reply with one number." if n is None else f"{n} is too {'high' if n > self.answer else 'low'}."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" No tries left; it was {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}


# --- solver ---
import re


def solve(observations):
    first = observations[0]
    age = int(re.search(r"is (\d+) years old", first).group(1))
    later = re.search(r"in (\d+) years", first)
    return "\\boxed{%d}" % (age + int(later.group(1)) if later else age - int(re.search(r"(\d+) years ago", first).group(1)))
