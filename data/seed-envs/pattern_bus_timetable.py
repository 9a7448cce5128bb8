# skill: pattern-recognition
# setting: games
# hint: Find the minutes between neighbouring departures (the gaps may alternate between two values) and keep adding them until you reach the bus asked for.
import random
import re


class BusTimetableEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        gaps = [rng.choice([10, 12, 15, 20, 25]), rng.choice([15, 20, 30, 35, 40])]
        if rng.random() < 0.4:
            gaps[1] = gaps[0]
        times = [rng.randint(5, 7) * 60 + rng.choice([0, 5, 10, 15, 20, 30, 45])]
        self.number = rng.randint(9, 15)
        while len(times) < self.number:
            times.append(times[-1] + gaps[(len(times) - 1) % 2])
        self.answer = times[-1]
        shown = ", ".join(f"{t // 60:02d}:{t % 60:02d}" for t in times[:5])
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"The first buses of the day leave at:\n{shown}, ...\n"
            f"The timetable keeps the same pattern all day. When does bus number {self.number} leave? "
            f"Give the time as HH:MM in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        parts = re.findall(r"(\d{1,2}):(\d{2})", boxed[-1]) if boxed else []
        guess = int(parts[0][0]) * 60 + int(parts[0][1]) if len(parts) == 1 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Put one HH:MM time in \\boxed{...}." if guess is None else "Wrong time."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            ans = f"{self.answer // 60:02d}:{self.answer % 60:02d}"
            return f"{msg} Out of attempts; it leaves at {ans}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
