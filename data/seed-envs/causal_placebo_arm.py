# skill: causal-inference
# setting: games
# hint: Taking any pill helps a little by itself; the drug's own effect is the drug group minus the placebo group, not minus the no-pill group.
import random
import re


class PlaceboArmEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        base = rng.randint(2, 8)
        placebo = rng.randint(2, 9)
        drug = rng.randint(3, 15)
        self.answer = drug
        groups = [("no pill", base), ("placebo pill", base + placebo), ("drug pill", base + placebo + drug)]
        rng.shuffle(groups)
        lines = [f"- {g}: average pain drop of {v} points" for g, v in groups]
        obs = (
            "Patients were randomly split into three groups of equal size.\n" + "\n".join(lines)
            + "\nBy how many points does the drug's active ingredient itself lower pain, beyond the effect of "
            f"taking a pill? Answer with \\boxed{{N}}. You have {self.MAX_TRIES} attempts."
        )
        self.tries, self.done, self.won = 0, False, False
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"-?\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if nums else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Put one whole number inside \\boxed{...}." if guess is None else f"{guess} is not right."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
