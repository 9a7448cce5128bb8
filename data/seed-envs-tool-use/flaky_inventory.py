# skill: error-recovery
# setting: tool-use
# hint: When the warehouse answers with an error, read what it asks for and call it again with that.
import random

PARTS = ["bolt", "washer", "gear", "spring", "valve", "hinge"]
SITES = ["north", "south", "east"]


class FlakyInventoryEnv:
    """Count a part across warehouses; the stock tool rejects a call until it gets the site's code."""

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.part = rng.choice(PARTS)
        self.codes = {s: "%s-%d" % (s[:2].upper(), rng.randint(10, 99)) for s in SITES}
        self.stock = {s: rng.randint(0, 40) for s in SITES}
        self.answer = sum(self.stock.values())
        return f"How many {self.part}s are in stock across all warehouses ({', '.join(SITES)})? Answer with the total.", {}

    def get_tools(self):
        return [
            {"name": "site_code", "description": "The code of a warehouse.",
             "parameters": {"type": "object", "properties": {"site": {"type": "string"}}, "required": ["site"]}},
            {"name": "stock", "description": "Units of a part in a warehouse.",
             "parameters": {"type": "object", "properties": {"site": {"type": "string"}, "part": {"type": "string"}},
                            "required": ["site", "part"]}},
        ]

    def execute_tool(self, name, arguments):
        site = str(arguments.get("site", "")).strip()
        if name == "site_code":
            return self.codes.get(site.lower(), f"No warehouse {site!r}.")
        if site not in self.codes.values():
            return f"Error 400: `site` must be a warehouse code (see site_code), not {site!r}."
        if str(arguments.get("part", "")).strip().lower() != self.part:
            return "0 units."
        s = [k for k, v in self.codes.items() if v == site][0]
        return f"{self.stock[s]} units."

    def step(self, answer):
        ok = str(answer).strip().split(" ")[0] == str(self.answer)
        return ("Correct." if ok else f"No, {self.answer}."), float(ok), True, False, {"success": ok}
