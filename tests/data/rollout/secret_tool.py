# skill: logical-deduction
# setting: tool-use
# hint: HINT-MARKER-TOOL call get_secret first, then submit what it returns
import json
import random


class SecretToolEnv:
    def __init__(self, max_turns=4):
        self.max_turns = max_turns

    def reset(self, seed=None):
        self.secret = str(random.Random(seed).randint(1000, 9999))
        self.turn = 0
        obs = (
            "Find the secret code and submit it.\n"
            "Tools (one JSON call per turn: {\"name\": ..., \"arguments\": {...}}):\n"
            "- get_secret {} : returns the code\n"
            "- submit {\"code\": string} : submit the code (ends the task)"
        )
        return obs, {}

    def step(self, action):
        self.turn += 1
        try:
            call = json.loads(action)
        except Exception:
            call = None
        if not isinstance(call, dict):
            obs, r, done = "Could not read a tool call.", 0.0, False
        elif call.get("name") == "get_secret":
            obs, r, done = f"The secret is {self.secret}.", 0.0, False
        elif call.get("name") == "submit":
            ok = str(call.get("arguments", {}).get("code")) == self.secret
            return ("Accepted." if ok else "Rejected."), float(ok), True, False, {"success": ok}
        else:
            obs, r, done = "Unknown tool.", 0.0, False
        if self.turn >= self.max_turns:
            return obs, r, False, True, {"success": False}
        return obs, r, False, False, {}
