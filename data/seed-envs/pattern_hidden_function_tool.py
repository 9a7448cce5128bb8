# skill: pattern-recognition
# setting: tool-use
# hint: Evaluate a few neighbouring inputs and compare the steps between outputs: constant steps suggest a line, growing steps a square term, a fall then a rise a distance from a point. Test your formula before submitting.
import json
import random
import re


class HiddenFunctionEnv:
    MAX_STEPS = 8
    MAX_EVALS = 5

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        a, b = rng.randint(2, 6), rng.randint(-9, 9)
        kind = rng.choice(["line", "square", "distance"])
        if kind == "line":
            self.f = lambda x: a * x + b
        elif kind == "square":
            self.f = lambda x: x * x + (a - 4) * x + b
        else:
            self.f = lambda x: a * abs(x - b)
        self.target = rng.randint(12, 30)
        self.steps, self.evals, self.done, self.won = 0, 0, False, False
        obs = (
            "A machine turns every whole number x into a number f(x) by a hidden rule. "
            f"Find f({self.target}) without evaluating it there directly.\n"
            "Tools (reply with one JSON call per turn: {\"name\": ..., \"arguments\": {...}}):\n"
            f"- evaluate {{\"x\": integer}} : returns f(x); any x from -50 to 50 except {self.target}, at most {self.MAX_EVALS} times\n"
            f"- submit {{\"value\": integer}} : your answer for f({self.target}) (ends the task)\n"
            f"You have {self.MAX_STEPS} turns."
        )
        return obs, {}

    @staticmethod
    def _parse(action):
        text, dec = str(action), json.JSONDecoder()
        for match, _ in zip(re.finditer(r"\{", text), range(20)):
            try:
                obj = dec.raw_decode(text, match.start())[0]
            except Exception:
                continue
            if isinstance(obj, dict):
                return obj
        return None

    @staticmethod
    def _int(value):
        text = str(value).strip()
        return int(float(text)) if re.fullmatch(r"-?\d{1,6}(\.0*)?", text, re.ASCII) else None

    def _evaluate(self, x):
        if x is None or not -50 <= x <= 50 or x == self.target:
            return f"Error: x must be a whole number from -50 to 50, other than {self.target}."
        if self.evals >= self.MAX_EVALS:
            return "No evaluations left. Call submit."
        self.evals += 1
        return f"f({x}) = {self.f(x)}. Evaluations left: {self.MAX_EVALS - self.evals}."

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        call = self._parse(action) or {}
        args, name = call.get("arguments", {}), call.get("name")
        if not call or not isinstance(args, dict):
            obs = "Could not read a tool call. Reply with JSON like {\"name\": \"evaluate\", \"arguments\": {\"x\": 1}}."
        elif name == "evaluate":
            obs = self._evaluate(self._int(args.get("x")))
        elif name == "submit":
            self.done = True
            self.won = self._int(args.get("value")) == self.f(self.target)
            obs = "Correct!" if self.won else f"Wrong; f({self.target}) = {self.f(self.target)}."
            return obs, float(self.won), True, False, {"success": self.won}
        else:
            obs = "Unknown tool. Use evaluate or submit."
        self.done = self.steps >= self.MAX_STEPS
        return obs + " Out of turns." * self.done, 0.0, False, self.done, {"success": False}
