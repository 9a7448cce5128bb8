# skill: pattern-recognition
# setting: games
# hint: Divide the change in the new reading by the change in Celsius to get the step per degree, then use one known pair to find the fixed offset.
import random
import re


class ThermometerScaleEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        a, b = rng.randint(2, 5), rng.randint(-30, 30)
        temps = sorted(rng.sample(range(0, 55, 5), 3))
        pairs = [f"{t} C reads {a * t + b}" for t in temps]
        target = rng.randint(60, 100)
        self.answer = a * target + b
        self.tries, self.done, self.won = 0, False, False
        obs = (
            "A lab thermometer uses its own scale, which grows evenly with the Celsius temperature:\n"
            + "\n".join(pairs)
            + f"\nWhat does it read at {target} C? Put the number in \\boxed{{...}}. "
            f"You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"-?\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 12 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Put one whole number inside \\boxed{...}." if guess is None else f"{guess} is not right."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
