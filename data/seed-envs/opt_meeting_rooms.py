# skill: optimisation
# setting: games
# hint: The rooms needed equal the most meetings running at one moment; count the meetings in progress at each start hour.
import random
import re


class MeetingRoomsEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.meetings = []
        for _ in range(rng.randint(5, 7)):
            start = rng.randint(8, 16)
            self.meetings.append((start, start + rng.randint(1, 3)))
        self.meetings.sort()
        self.best = 0
        for s, _ in self.meetings:
            busy = sum(1 for a, b in self.meetings if a <= s < b)
            self.best = max(self.best, busy)
        self.tries, self.done, self.won = 0, False, False
        listing = ", ".join(f"{a}:00-{b}:00" for a, b in self.meetings)
        obs = (
            f"A lab has meetings: {listing}. A room freed at 11:00 can host a meeting starting "
            "at 11:00. What is the fewest rooms needed so that no meetings clash? "
            f"Put it inside \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 4 else None
        if guess == self.best:
            self.done, self.won = True, True
            return f"Correct! {self.best} rooms are enough.", 1.0, True, False, {"success": True}
        if guess is not None and guess < self.best:
            msg = f"{guess} rooms are too few; meetings would clash."
        else:
            msg = "That is not the fewest rooms that works."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.best}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
