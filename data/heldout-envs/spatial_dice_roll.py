# skill: spatial-reasoning
# setting: games
# hint: Track the top, north and east faces; opposite faces add up to seven. Rolling toward a direction sends the top face to that side and brings up the face from the opposite side.
import random
import re


class DiceRollEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    @staticmethod
    def _roll(top, north, east, direction):
        if direction == "north":
            return 7 - north, top, east
        if direction == "south":
            return north, 7 - top, east
        if direction == "east":
            return 7 - east, north, top
        return east, north, 7 - top

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        top = rng.randint(1, 6)
        north = rng.choice([f for f in range(1, 7) if f not in (top, 7 - top)])
        east = rng.choice([f for f in range(1, 7) if f not in (top, 7 - top, north, 7 - north)])
        rolls = [rng.choice(["north", "south", "east", "west"]) for _ in range(rng.randint(2, 4))]
        state = (top, north, east)
        for direction in rolls:
            state = self._roll(*state, direction)
        self.answer = state[0]
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A standard die (opposite faces add up to 7) lies on a table with {top} on top, {north} facing north "
            f"and {east} facing east. It is rolled over one edge at a time, in this order: {', '.join(rolls)}. "
            "(Rolling north tips the die over its north edge, so the top face ends up facing north.) "
            f"Which number is on top at the end? Answer in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        digits = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(digits[0]) if len(digits) == 1 and len(digits[0]) < 3 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Answer with one face number from 1 to 6 in \\boxed{...}." if guess is None else f"{guess} is not on top."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the top face was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
