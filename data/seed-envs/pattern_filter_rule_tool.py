# skill: pattern-recognition
# setting: tool-use
# hint: Test numbers that split the candidate rules and cross out every rule that disagrees with an answer.
import json
import random
import re


class FilterRuleEnv:
    MAX_STEPS = 8
    RULES = {
        "even": lambda n: n % 2 == 0,
        "multiple of 3": lambda n: n % 3 == 0,
        "multiple of 5": lambda n: n % 5 == 0,
        "above 50": lambda n: n > 50,
        "square": lambda n: int(n ** 0.5) ** 2 == n,
    }

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.answer = rng.choice(sorted(self.RULES))
        self.steps, self.done, self.won = 0, False, False
        obs = (
            "A Python filter keeps numbers by a hidden rule: " + ", ".join(sorted(self.RULES)) + ".\n"
            "One JSON call per turn, {\"name\": ..., \"arguments\": {...}}. Tools:\n"
            "- test {\"n\": int} : is n (1 to 100) kept?\n"
            "- submit {\"rule\": str} : the rule, ends the task\n"
            f"You have {self.MAX_STEPS} turns."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        try:
            call = json.loads(re.search(r"\{.*\}", str(action), re.S).group(0))
            name, args = call["name"], dict(call["arguments"])
        except Exception:
            name, args = None, {}
        if name == "test":
            n = args.get("n")
            if n in range(1, 101):
                obs = f"{n} is {'kept' if self.RULES[self.answer](int(n)) else 'dropped'}."
            else:
                obs = "Use n from 1 to 100."
        elif name == "submit":
            self.done, self.won = True, str(args.get("rule")).strip().lower() == self.answer
            obs = "Correct!" if self.won else f"No, it is {self.answer}."
        else:
            obs = "Use test or submit."
        if self.steps >= self.MAX_STEPS and not self.done:
            self.done, obs = True, obs + " Out of turns."
        return obs, float(self.won), self.done, False, {"success": self.won}
