# skill: optimisation
# setting: tool-use
# hint: Runtime falls then rises as threads grow; compare neighbouring counts and move toward the faster side.
import json
import random
import re


class ThreadBenchmarkEnv:
    MAX_STEPS = 8

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        while True:
            self.work, self.cost = rng.randint(100, 900), rng.randint(2, 30)
            times = [self._time(k) for k in range(1, 9)]
            self.best = min(times)
            if times.index(self.best) in range(1, 7):
                break
        self.steps, self.done, self.won = 0, False, False
        obs = (
            "A program can use 1 to 8 threads. Find the count that runs fastest.\n"
            "Tools (reply with one JSON call per turn: {\"name\": ..., \"arguments\": {...}}):\n"
            "- benchmark {\"threads\": k} : measured runtime in ms with k threads\n"
            "- submit {\"threads\": k} : choose k (ends the task)\n"
            f"You have {self.MAX_STEPS} turns."
        )
        return obs, {}

    def _time(self, k):
        return round(self.work / k + self.cost * k)

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        try:
            call = json.loads(re.search(r"\{.*\}", str(action), re.S).group(0))
            name, k = call["name"], int(call["arguments"]["threads"])
        except Exception:
            name, k = None, 0
        if name not in ("benchmark", "submit") or k not in range(1, 9):
            obs = "Call benchmark or submit with threads from 1 to 8."
        elif name == "submit":
            self.done, self.won = True, self._time(k) == self.best
            obs = "Fastest setting!" if self.won else f"The best was {self.best} ms."
            return obs, float(self.won), True, False, {"success": self.won}
        else:
            obs = f"{k} threads: {self._time(k)} ms."
        self.done = self.steps >= self.MAX_STEPS
        return obs + " Out of turns." * self.done, 0.0, False, self.done, {"success": False}
