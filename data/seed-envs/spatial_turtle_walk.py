# skill: spatial-reasoning
# setting: games
# hint: Keep track of the direction you face after every turn (turning right goes north, east, south, west, north) and keep two running totals: east minus west and north minus south.
import random
import re


class TurtleWalkEnv:
    HEADINGS = [("north", 0, 1), ("east", 1, 0), ("south", 0, -1), ("west", -1, 0)]
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        facing, x, y = 0, 0, 0
        steps = []
        for i in range(rng.randint(4, 6)):
            if i > 0:
                turn = rng.choice(["left", "right", "left", "right", "around"])
                facing = (facing + {"left": 3, "right": 1, "around": 2}[turn]) % 4
                steps.append(f"turn {turn}")
            dist = rng.randint(1, 6)
            x += self.HEADINGS[facing][1] * dist
            y += self.HEADINGS[facing][2] * dist
            steps.append(f"walk {dist} steps forward")
        self.answer = (x, y)
        self.tries, self.done, self.won = 0, False, False
        obs = (
            "You stand at the origin of a flat field, facing north. You follow these instructions in order: "
            + ", then ".join(steps)
            + ".\nWhere do you end up? Answer with your position as \\boxed{(x, y)}, where x counts steps east "
            f"(negative for west) and y counts steps north (negative for south). You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    @staticmethod
    def _parse(action):
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"-?\d+", boxed[-1]) if boxed else []
        return (int(nums[0]), int(nums[1])) if len(nums) == 2 and max(map(len, nums)) < 10 else None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        guess = self._parse(action)
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Answer with two whole numbers, like \\boxed{(x, y)}."
        else:
            parts = [f"x is {'right' if guess[0] == self.answer[0] else 'wrong'}",
                     f"y is {'right' if guess[1] == self.answer[1] else 'wrong'}"]
            msg = "Not there: " + " and ".join(parts) + "."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; you were at {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
