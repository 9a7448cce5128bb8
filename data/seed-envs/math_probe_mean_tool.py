# skill: mathematical-reasoning
# setting: tool-use
# hint: Read each hour in the window, add the readings and divide by their count.
import json
import random
import re


class ProbeMeanEnv:
    MAX_STEPS = 7

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.temps = [rng.randint(12, 30) for _ in range(10)]
        first = rng.randint(1, 7)
        last = first + 3
        self.temps[last - 1] += -sum(self.temps[first - 1:last]) % 4
        self.answer = sum(self.temps[first - 1:last]) // 4
        self.steps = 0
        self.done = False
        self.won = False
        obs = (
            "A probe read a pond's temperature at hours 1 to 10. "
            f"Find the mean reading over hours {first} to {last}.\n"
            "One JSON call per turn, {\"name\": ..., \"arguments\": {...}}. Tools:\n"
            "- read {\"hour\": integer} : degrees C\n"
            "- submit {\"mean\": number} : ends the task\n"
            f"You have {self.MAX_STEPS} turns."
        )
        return obs, {}

    def _parse(self, action):
        try:
            call = json.loads(re.search(r"\{.*\}", str(action), re.S).group(0))
        except Exception:
            return {}
        return call if isinstance(call, dict) else {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        call = self._parse(action)
        args = call.get("arguments")
        args = args if isinstance(args, dict) else {}
        if call.get("name") == "submit":
            self.done = True
            self.won = args.get("mean") == self.answer
            obs = "Correct!" if self.won else f"Wrong; it was {self.answer}."
            return obs, float(self.won), True, False, {"success": self.won}
        hour = args.get("hour")
        if call.get("name") == "read" and hour in range(1, 11):
            obs = f"{self.temps[int(hour) - 1]} C."
        else:
            obs = "Unknown tool or hour."
        self.done = self.steps >= self.MAX_STEPS
        return obs, 0.0, False, self.done, {"success": False}
