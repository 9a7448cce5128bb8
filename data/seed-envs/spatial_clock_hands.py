# skill: spatial-reasoning
# setting: games
# hint: The minute hand turns 6 degrees per minute and the hour hand 30 degrees per hour plus half a degree per minute; take the difference and use 360 minus it if it is over 180.
import random
import re


class ClockHandsEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        hour = rng.randint(1, 12)
        minute = rng.choice(range(0, 60, 2))
        diff = abs((hour % 12) * 30 + minute / 2 - minute * 6)
        self.answer = int(min(diff, 360 - diff))
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"An analog clock shows {hour}:{minute:02d}. Both hands move smoothly. "
            "What is the smaller angle between the hour hand and the minute hand, in degrees? "
            f"Answer with a whole number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 4 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Answer with one whole number of degrees in \\boxed{...}."
        else:
            msg = f"{guess} degrees is too {'small' if guess < self.answer else 'large'}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the angle was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
