# skill: spatial-reasoning
# setting: games
# hint: Keep a running bearing: add each starboard turn, subtract each port turn, and wrap the total into 0 to 359.
import random
import re


class CompassBearingEnv:
    MAX_TRIES = 2
    NAMES = {0: "north", 90: "east", 180: "south", 270: "west"}

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        start = rng.choice([0, 90, 180, 270])
        bearing = start
        turns = []
        for _ in range(rng.randint(3, 5)):
            angle = rng.choice(range(15, 181, 15))
            side = rng.choice(["port", "starboard"])
            bearing += angle if side == "starboard" else -angle
            turns.append(f"{angle} degrees to {side}")
        self.answer = bearing % 360
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A ship sails due {self.NAMES[start]} (bearing {start}). It then turns {', then '.join(turns)}. "
            "Starboard is clockwise, port is counterclockwise; bearings run clockwise from north, 0 to 359. "
            "What is the final bearing? "
            f"Answer in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
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
            msg = "Answer with one bearing from 0 to 359 in \\boxed{...}."
        else:
            msg = f"Bearing {guess} is wrong."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; it was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
