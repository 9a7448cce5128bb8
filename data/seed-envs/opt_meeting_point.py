# skill: optimisation
# setting: games
# hint: The total walking distance is smallest at the median position, so sort the house numbers and choose the middle one.
import random
import re


class MeetingPointEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.houses = rng.sample(range(1, 60), rng.choice([5, 7]))
        middle = sorted(self.houses)[len(self.houses) // 2]
        self.best = self._cost(middle)
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"Friends live on one straight street at house numbers {', '.join(map(str, self.houses))}. "
            "Choose a meeting spot (a house number) so that the total distance everyone walks is as small "
            f"as possible. Give the spot inside \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def _cost(self, spot):
        return sum(abs(h - spot) for h in self.houses)

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        if len(nums) != 1 or len(nums[0]) > 4:
            msg = "Give one house number inside \\boxed{...}."
        elif self._cost(int(nums[0])) == self.best:
            self.done, self.won = True, True
            return f"Optimal! Total walk {self.best}.", 1.0, True, False, {"success": True}
        else:
            spot = int(nums[0])
            msg = f"Meeting at {spot} makes a total walk of {self._cost(spot)}; a shorter total is possible."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the best total was {self.best}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
