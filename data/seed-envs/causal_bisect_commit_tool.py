# skill: causal-inference
# setting: tool-use
# hint: The culprit is the first commit whose tests fail; test the middle of the commits still in doubt to halve the range.
import json
import random
import re


class BisectCommitEnv:
    MAX_STEPS = 8

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.n = rng.randint(8, 16)
        self.bad = rng.randint(2, self.n)
        self.steps, self.done, self.won = 0, False, False
        obs = (
            f"A project has commits 1 to {self.n}. Commit 1 passes its tests and commit {self.n} fails. "
            "One commit added a bug that every later commit keeps.\n"
            "Tools (reply with one JSON call per turn: {\"name\": ..., \"arguments\": {...}}):\n"
            "- run_tests {\"commit\": number} : run the tests on that commit\n"
            "- blame {\"commit\": number} : name the commit that caused the bug (ends the task)\n"
            f"You have {self.MAX_STEPS} turns."
        )
        return obs, {}

    def _parse(self, action):
        text = str(action)
        try:
            call = json.loads(text[text.index("{"):text.rindex("}") + 1])
            args = call.get("arguments", {})
            return call.get("name"), int(args.get("commit"))
        except Exception:
            return None, None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        name, commit = self._parse(action)
        if name == "blame":
            self.done, self.won = True, commit == self.bad
            obs = "Correct!" if self.won else f"Wrong; commit {self.bad} caused it."
            return obs, float(self.won), True, False, {"success": self.won}
        if name == "run_tests" and 1 <= commit <= self.n:
            obs = f"Commit {commit}: tests {'FAIL' if commit >= self.bad else 'pass'}."
        else:
            obs = "Call run_tests or blame with a valid commit number."
        self.done = self.steps >= self.MAX_STEPS
        return obs + " Out of turns." * self.done, 0.0, False, self.done, {"success": False}
