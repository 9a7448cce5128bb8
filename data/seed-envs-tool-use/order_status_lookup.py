# skill: data-retrieval
# setting: tool-use
# hint: Search the customer's orders first, then read the status of the one that matches the item.
import random

ITEMS = ["kettle", "lamp", "backpack", "headphones", "blender", "desk chair", "monitor", "umbrella"]
STATUSES = ["processing", "shipped", "delivered", "returned", "cancelled"]
NAMES = ["Ada", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana"]


class OrderStatusEnv:
    """A shop's order records: find which status one customer's order of one item has."""

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.orders = {}
        for name in rng.sample(NAMES, 4):
            for item in rng.sample(ITEMS, 3):
                oid = "A%03d" % rng.randint(100, 999)
                while oid in self.orders:
                    oid = "A%03d" % rng.randint(100, 999)
                self.orders[oid] = {"customer": name, "item": item, "status": rng.choice(STATUSES)}
        oid = rng.choice(sorted(self.orders))
        self.customer, self.item = self.orders[oid]["customer"], self.orders[oid]["item"]
        self.answer = self.orders[oid]["status"]
        return f"{self.customer} asks about the {self.item} they ordered. What is that order's status?", {}

    def get_tools(self):
        return [
            {"name": "list_orders", "description": "The order ids of a customer.",
             "parameters": {"type": "object", "properties": {"customer": {"type": "string"}}, "required": ["customer"]}},
            {"name": "get_order", "description": "An order's item and status.",
             "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}},
        ]

    def execute_tool(self, name, arguments):
        if name == "list_orders":
            who = str(arguments.get("customer", "")).strip().lower()
            ids = [o for o, r in sorted(self.orders.items()) if r["customer"].lower() == who]
            return ", ".join(ids) if ids else f"No customer named {arguments.get('customer')!r}."
        oid = str(arguments.get("order_id", "")).strip().upper()
        if oid not in self.orders:
            return f"No order {oid!r}."
        r = self.orders[oid]
        return f"Order {oid}: {r['item']}, {r['status']}."

    def step(self, answer):
        ok = str(answer).strip().lower() == self.answer
        return ("Correct." if ok else f"No, it is {self.answer}."), float(ok), True, False, {"success": ok}
