# skill: multi-step-workflow
# setting: tool-use
# hint: Find the order, check it may be refunded, issue the refund, and answer with the refund's id.
import random

ITEMS = ["toaster", "scarf", "novel", "drill", "teapot", "sneakers"]


class RefundWorkflowEnv:
    """Refund one order: look it up, check it is refundable, refund it, report the refund id."""

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.orders = {}
        for item in rng.sample(ITEMS, 4):
            self.orders["R%d" % rng.randint(1000, 9999)] = {"item": item, "days": rng.randint(1, 60)}
        self.item = rng.choice([o["item"] for o in self.orders.values() if o["days"] <= 30] or [rng.choice(ITEMS)])
        for o in self.orders.values():
            if o["item"] == self.item:
                o["days"] = min(o["days"], 30)
        self.checked, self.refund_id = set(), None
        self.rng = rng
        return f"The customer wants a refund for the {self.item}. Refund it and answer with the refund id.", {}

    def get_tools(self):
        oid = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}
        return [
            {"name": "find_order", "description": "The order id of an item.",
             "parameters": {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]}},
            {"name": "check_policy", "description": "Whether an order may be refunded (within 30 days).", "parameters": oid},
            {"name": "refund", "description": "Refund an order that passed check_policy; returns the refund id.", "parameters": oid},
        ]

    def execute_tool(self, name, arguments):
        if name == "find_order":
            item = str(arguments.get("item", "")).strip().lower()
            ids = [o for o, r in self.orders.items() if r["item"] == item]
            return ids[0] if ids else f"No order for {item!r}."
        oid = str(arguments.get("order_id", "")).strip().upper()
        if oid not in self.orders:
            return f"No order {oid!r}."
        if name == "check_policy":
            ok = self.orders[oid]["days"] <= 30
            if ok:
                self.checked.add(oid)
            return "Refundable." if ok else "Not refundable: older than 30 days."
        if oid not in self.checked:
            return "Error: run check_policy on this order first."
        if self.orders[oid]["item"] == self.item and self.refund_id is None:
            self.refund_id = "RF-%d" % self.rng.randint(10000, 99999)
        return self.refund_id if self.orders[oid]["item"] == self.item else "Refunded (not the item asked for)."

    def step(self, answer):
        ok = self.refund_id is not None and str(answer).strip().upper() == self.refund_id
        return ("Correct." if ok else "No refund with that id."), float(ok), True, False, {"success": ok}
