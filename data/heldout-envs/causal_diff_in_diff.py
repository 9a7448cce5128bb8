# skill: causal-inference
# setting: games
# hint: The other town shows how much things change anyway; subtract its change from the change in the town with the new limit.
import random
import re


class DiffInDiffEnv:
    TOWNS = ["Ashby", "Brookfield", "Cedarton", "Dunmore", "Elmwood", "Fairview"]
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        town, other = rng.sample(self.TOWNS, 2)
        trend = rng.randint(-10, 10)
        self.answer = rng.choice([-1, 1]) * rng.randint(3, 20)
        t_before, o_before = rng.randint(30, 90), rng.randint(30, 90)
        t_after = t_before + trend + self.answer
        o_after = o_before + trend
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"In January, {town} lowered its speed limit; {other} did not. Both towns follow the same trends. "
            "Average weekly traffic accidents:\n"
            f"- {town}: {t_before} before, {t_after} after\n- {other}: {o_before} before, {o_after} after\n"
            f"How many weekly accidents did the new speed limit cause in {town} (a negative number means fewer)? "
            f"Put the number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"-?\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 8 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Give one whole number in \\boxed{...}." if guess is None else f"It is not {guess}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; it was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
