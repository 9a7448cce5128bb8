# skill: api-orchestration
# setting: tool-use
# hint: Get the rate from the first currency to the second, then convert with exactly that rate.
import random

CODES = ["EUR", "USD", "GBP", "JPY", "CHF", "SEK"]


class CurrencyChainEnv:
    """Convert an amount between two currencies: the rate tool's result feeds the convert tool."""

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.src, self.dst = rng.sample(CODES, 2)
        self.amount = rng.randint(2, 90) * 10
        self.rates = {(a, b): round(rng.uniform(0.2, 3.0), 2) for a in CODES for b in CODES if a != b}
        self.answer = round(self.amount * self.rates[(self.src, self.dst)], 2)
        return f"How much is {self.amount} {self.src} in {self.dst}? Answer with the number, rounded to cents.", {}

    def get_tools(self):
        return [
            {"name": "get_rate", "description": "The exchange rate from one currency to another.",
             "parameters": {"type": "object", "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
                            "required": ["from", "to"]}},
            {"name": "convert", "description": "amount × rate, rounded to cents.",
             "parameters": {"type": "object", "properties": {"amount": {"type": "number"}, "rate": {"type": "number"}},
                            "required": ["amount", "rate"]}},
        ]

    def execute_tool(self, name, arguments):
        if name == "get_rate":
            pair = (str(arguments.get("from", "")).upper(), str(arguments.get("to", "")).upper())
            return f"1 {pair[0]} = {self.rates[pair]} {pair[1]}" if pair in self.rates else f"Unknown currency pair {pair}."
        try:
            return str(round(float(arguments["amount"]) * float(arguments["rate"]), 2))
        except (KeyError, TypeError, ValueError):
            return "convert needs a numeric amount and rate."

    def step(self, answer):
        try:
            ok = abs(float(str(answer).replace(",", "").split()[0]) - self.answer) < 0.01
        except (ValueError, IndexError):
            ok = False
        return ("Correct." if ok else f"No, it is {self.answer}."), float(ok), True, False, {"success": ok}

# --- solver ---
import json
import re


def solve(observations):
    amount, src, dst = re.search(r"How much is (\d+) (\w+) in (\w+)\?", observations[0]).groups()
    if len(observations) == 1:
        return json.dumps({"name": "get_rate", "arguments": {"from": src, "to": dst}})
    rate = float(re.search(r"= ([\d.]+)", observations[1]).group(1))
    return json.dumps({"name": "answer", "arguments": {"answer": "%.2f" % round(int(amount) * rate, 2)}})
