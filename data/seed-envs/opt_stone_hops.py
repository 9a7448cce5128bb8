# skill: optimisation
# setting: games
# hint: Track the farthest stone you can reach with the hops made so far; take a new hop only when you pass the end of the current reach.
import random
import re


class StoneHopsEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.jumps = [rng.randint(1, 4) for _ in range(rng.randint(7, 10))]
        last = len(self.jumps) - 1
        self.best, end, far = 0, 0, 0
        for i in range(last):
            far = max(far, i + self.jumps[i])
            if i == end:
                self.best += 1
                end = far
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A frog crosses a pond on stones numbered 0 to {last}. From stone i it can hop forward up to "
            f"the number written on stone i: {', '.join(map(str, self.jumps))}. Starting on stone 0, what "
            f"is the fewest hops to reach stone {last}? Put it inside \\boxed{{...}}. "
            f"You have {self.MAX_TRIES} attempts."
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
            return f"Correct! {self.best} hops is the minimum.", 1.0, True, False, {"success": True}
        if guess is not None and guess < self.best:
            msg = f"The frog cannot get across in {guess} hops."
        else:
            msg = "The frog can do it in fewer hops."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.best}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
