# skill: mathematical-reasoning
# setting: tool-use
# hint: Subtract the balance from the price, divide by the deposit and round up, as a part month needs a full deposit.
import json
import random
import re


class SavingsGoalEnv:
    MAX_STEPS = 6

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.balance = rng.randint(0, 200)
        self.deposit = rng.randint(15, 80)
        price = self.balance + rng.randint(100, 900)
        self.answer = (price - self.balance + self.deposit - 1) // self.deposit
        self.steps = 0
        self.done = False
        self.won = False
        obs = (
            f"You save for a bike that costs ${price}. How many monthly deposits until you can buy it?\n"
            "Reply with one JSON call per turn: {\"name\": ..., \"arguments\": {...}}. Tools:\n"
            "- get_account {} : balance and monthly deposit\n"
            "- submit {\"months\": integer} : final answer (ends the task)\n"
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
        if call.get("name") == "submit" and isinstance(args, dict):
            self.done = True
            self.won = str(args.get("months")) == str(self.answer)
            obs = "Correct!" if self.won else f"Wrong; it takes {self.answer}."
            return obs, float(self.won), True, False, {"success": self.won}
        if call.get("name") == "get_account":
            obs = f"Balance: ${self.balance}. Monthly deposit: ${self.deposit}."
        else:
            obs = "Unknown call; use get_account or submit."
        self.done = self.steps >= self.MAX_STEPS
        return obs, 0.0, False, self.done, {"success": False}
