# skill: causal-inference
# setting: tool-use
# hint: Forcing a value changes only what comes later in the chain; count how many others each one moves.
import json
import random
import re


class ChainOrderEnv:
    NAMES = ["size", "load", "cost", "heat"]
    MAX_STEPS = 6

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.order = rng.sample(self.NAMES, 3)
        self.steps, self.done, self.won = 0, False, False
        obs = (
            f"The program values {', '.join(sorted(self.order))} form a hidden chain: first sets second, "
            "second sets third.\n"
            "Tools (reply with one JSON call per turn: {\"name\": ..., \"arguments\": {...}}):\n"
            "- force {\"var\": name} : fix one value, see what changes\n"
            "- submit_order {\"order\": [first, second, third]} : the chain order (ends the task)\n"
            f"You have {self.MAX_STEPS} turns."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        text = str(action)
        try:
            call = json.loads(text[text.index("{"):text.rindex("}") + 1])
            name, args = call.get("name"), dict(call.get("arguments", {}))
        except Exception:
            name, args = None, {}
        var = str(args.get("var")).lower()
        if name == "submit_order":
            given = re.findall(r"[a-z]+", str(args.get("order")).lower())
            self.done, self.won = True, given == self.order
            obs = "Correct!" if self.won else f"Wrong; it was {', '.join(self.order)}."
            return obs, float(self.won), True, False, {"success": self.won}
        if name == "force" and var in self.order:
            later = self.order[self.order.index(var) + 1:]
            obs = f"Forcing {var} changed: {', '.join(sorted(later)) or 'nothing'}."
        else:
            obs = "Unknown tool or variable."
        self.done = self.steps >= self.MAX_STEPS
        return obs + " Out of turns." * self.done, 0.0, False, self.done, {"success": False}
