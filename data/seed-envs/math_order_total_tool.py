# skill: mathematical-reasoning
# setting: tool-use
# hint: Read the order first, look up the unit price of every item on it, multiply each price by its quantity, add the line totals, and take the discount off the sum before submitting.
import json
import random
import re


class OrderTotalEnv:
    MAX_STEPS = 8
    ITEMS = ["pencil", "notebook", "ruler", "stapler", "eraser", "marker", "folder", "glue"]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.prices = {name: rng.randint(2, 19) for name in self.ITEMS}
        chosen = rng.sample(self.ITEMS, rng.randint(2, 3))
        self.order = {name: rng.randint(1, 6) for name in chosen}
        subtotal = sum(self.prices[n] * q for n, q in self.order.items())
        self.discount = rng.choice([0, 5, 10]) if subtotal > 25 else 0
        self.answer = subtotal - self.discount
        self.steps = 0
        self.done = False
        self.won = False
        obs = (
            "A customer's order must be totalled. Prices are only available through the tools.\n"
            "Tools (reply with one JSON call per turn: {\"name\": ..., \"arguments\": {...}}):\n"
            "- get_order {} : the items, quantities and the flat discount of the order\n"
            "- get_price {\"item\": string} : unit price of one item in dollars\n"
            "- calculate {\"op\": \"add\"|\"subtract\"|\"multiply\", \"a\": number, \"b\": number} : arithmetic\n"
            "- submit_total {\"total\": number} : submit the amount due (ends the task)\n"
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

    def _run(self, name, args):
        if name == "get_order":
            lines = ", ".join(f"{q} x {n}" for n, q in self.order.items())
            return f"Order: {lines}. Discount: ${self.discount} off the whole order."
        if name == "get_price":
            item = str(args.get("item", "")).strip().lower()
            return f"{item}: ${self.prices[item]} each" if item in self.prices else f"Unknown item '{item}'."
        if name == "calculate":
            a, b, op = args.get("a"), args.get("b"), args.get("op")
            if not all(isinstance(v, (int, float)) and abs(v) < 1e9 for v in (a, b)):
                return "Error: a and b must be numbers."
            ops = {"add": a + b, "subtract": a - b, "multiply": a * b}
            if not isinstance(op, str) or op not in ops:
                return "Error: op must be add, subtract or multiply."
            return f"Result: {ops[op]}"
        return f"Unknown tool '{name}'. Use get_order, get_price, calculate or submit_total."

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        call = self._parse(action) or {}
        args, name = call.get("arguments", {}), call.get("name")
        if not call or not isinstance(args, dict):
            obs = "Could not read a tool call. Reply with JSON like {\"name\": \"get_order\", \"arguments\": {}}."
        elif name == "submit_total":
            total = str(args.get("total", "")).strip().lstrip("$")
            self.won = total.replace(".", "", 1).lstrip("-").isdecimal() and float(total) == self.answer
            self.done = True
            obs = "Correct total. Order complete." if self.won else f"Wrong total; the amount due was ${self.answer}."
            return obs, float(self.won), True, False, {"success": self.won}
        else:
            obs = self._run(name, args)
        if self.steps >= self.MAX_STEPS:
            self.done = True
            return obs + " Out of turns.", 0.0, False, True, {"success": False}
        return obs, 0.0, False, False, {"success": False}
