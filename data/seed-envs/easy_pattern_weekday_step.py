# skill: pattern-recognition
# setting: games
# hint: See how far each entry jumps forward in the week and make the same jump from the last one, wrapping round.
import random
import re

DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


class WeekdayStepEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        i, jump = rng.randrange(7), rng.choice((1, 1, 2))
        shown = [DAYS[(i + jump * k) % 7] for k in range(3)]
        self.answer = DAYS[(i + jump * 3) % 7]
        self.options = rng.sample([self.answer] + rng.sample([d for d in DAYS if d != self.answer], 2), 3)
        self.tries, self.done, self.won = 0, False, False
        obs = (f"A robot runs on {', '.join(shown)}, ...\nWhich day is its next run? "
               f"Options: {', '.join(self.options)}.\nAnswer as \\boxed{{DAY}}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        low = str(action).lower().split("\\boxed{")[-1]
        days = [d for w in re.findall(r"[a-z]+", low) for d in DAYS if w in (d.lower(), d[:3].lower())]
        day = days[-1] if days else None
        if day == self.answer:
            self.done = self.won = True
            return "Correct!", (1.0, 0.6, 0.3)[self.tries - 1], True, False, {"success": True}
        note = f"Not {day}." if day else "Name a day."
        if day in self.options:
            self.options.remove(day)
            note += f" Left: {', '.join(self.options)}."
        self.done = self.tries >= self.MAX_TRIES
        return note, 0.0, self.done, False, {"success": False}
