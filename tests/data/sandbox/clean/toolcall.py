# skill: tool use
# setting: tool-use
# hint: Look the balance up before transferring.
import json


class BankToolEnv:
    def reset(self, seed=None):
        self.balance = 100 + (seed or 0) % 7
        self.turn = 0
        tools = [{"name": "get_balance", "arguments": {}}, {"name": "transfer", "arguments": {"amount": "int"}}]
        return "Transfer the whole balance. Tools: " + json.dumps(tools), {"tools": tools}

    def step(self, action):
        self.turn += 1
        try:
            call = json.loads(action)
            name, args = call["name"], call.get("arguments", {})
        except Exception:
            return "Invalid tool call.", 0.0, self.turn >= 8, False, {"error": "parse"}
        if name == "get_balance":
            return json.dumps({"balance": self.balance}), 0.0, self.turn >= 8, False, {}
        if name == "transfer" and args.get("amount") == self.balance:
            return "Done.", 1.0, True, False, {"success": True}
        return "Unknown tool or wrong amount.", 0.0, self.turn >= 8, False, {}
