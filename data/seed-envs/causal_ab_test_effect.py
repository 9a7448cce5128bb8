# skill: causal-inference
# setting: games
# hint: Assignment was random, so the version is the only systematic difference; the effect is the mean of group B minus the mean of group A.
import random
import re


class AbTestEffectEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def _group(self, rng, mean):
        devs = [rng.randint(-15, 15) for _ in range(3)]
        devs.append(-sum(devs))
        return [mean + d for d in devs]

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        mean_a = rng.randint(200, 400)
        self.answer = rng.choice([-1, 1]) * rng.randint(10, 80)
        self.group_a = self._group(rng, mean_a)
        self.group_b = self._group(rng, mean_a + self.answer)
        self.tries, self.done, self.won = 0, False, False
        obs = (
            "Visitors to a website were randomly given the old code A or the new code B. "
            "Page load times in milliseconds:\n"
            f"- A: {', '.join(str(v) for v in self.group_a)}\n- B: {', '.join(str(v) for v in self.group_b)}\n"
            "By how many milliseconds does switching from A to B change the average load time (negative "
            f"for a speed-up)? Put the number in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
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
