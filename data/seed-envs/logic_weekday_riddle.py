# skill: logical-deduction
# setting: games
# hint: Turn each phrase into a shift in days from today, undo the shift to land on today, and count forward modulo 7.
import random
import re


class WeekdayRiddleEnv:
    DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        today = rng.randint(0, 6)
        a = rng.randint(-3, 3)
        b = rng.randint(2, 5)
        ref = self.DAYS[(today + a + b) % 7]
        if a < 0:
            when = f"{-a} day{'s' if a < -1 else ''} ago"
        elif a > 0:
            when = f"{a} day{'s' if a > 1 else ''} from now"
        else:
            when = "today"
        ask = rng.randint(1, 6)
        self.answer = self.DAYS[(today + ask) % 7]
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"The day that comes {b} days after the day {when} is {ref}.\n"
            f"What day of the week will it be {ask} day{'s' if ask > 1 else ''} after today? "
            "Answer like \\boxed{Monday}. You have 2 attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = boxed[-1].strip().lower() if boxed else ""
        if guess == self.answer.lower():
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"Wrong: it will be {self.answer}.", 0.0, True, False, {"success": False}
        return "Wrong, try again.", 0.0, False, False, {"success": False}
