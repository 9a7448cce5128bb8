# skill: spatial-reasoning
# setting: games
# hint: The midpoint of two points is found by averaging the x coordinates and averaging the y coordinates separately.
import random
import re


class MidpointMeetEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        x1, y1 = rng.randint(-12, 12), rng.randint(-12, 12)
        x2 = x1 + 2 * rng.randint(-6, 6)
        y2 = y1 + 2 * rng.randint(1, 6)
        self.answer = ((x1 + x2) // 2, (y1 + y2) // 2)
        names = rng.choice([("Ana", "Ben"), ("a rover", "a lander"), ("the north camp", "the south camp")])
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"On a map grid, {names[0]} is at ({x1}, {y1}) and {names[1]} is at ({x2}, {y2}). They agree to meet "
            "exactly halfway along the straight line between them. At which point do they meet? "
            f"Answer as x, y in \\boxed{{...}}, for example \\boxed{{3, -2}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"-?\d+", boxed[-1]) if boxed else []
        guess = (int(nums[0]), int(nums[1])) if len(nums) == 2 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Answer with two whole numbers x, y in \\boxed{...}."
        else:
            msg = f"({guess[0]}, {guess[1]}) is not halfway."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; they meet at {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
