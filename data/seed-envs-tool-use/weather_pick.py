# skill: tool-selection
# setting: tool-use
# hint: Only one of the tools answers the question asked; the others are decoys that return related but wrong facts.
import random

CITIES = ["Lima", "Oslo", "Cairo", "Perth", "Quito", "Hanoi", "Dakar", "Riga"]


class WeatherPickEnv:
    """Which of two cities will be warmer tomorrow: the forecast tool, not the history or today tools."""

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.a, self.b = rng.sample(CITIES, 2)
        self.today = {c: rng.randint(-5, 35) for c in CITIES}
        self.record = {c: rng.randint(30, 48) for c in CITIES}
        self.tomorrow = {c: rng.randint(-5, 35) for c in CITIES}
        while self.tomorrow[self.a] == self.tomorrow[self.b]:
            self.tomorrow[self.b] = rng.randint(-5, 35)
        self.answer = self.a if self.tomorrow[self.a] > self.tomorrow[self.b] else self.b
        return f"Which city will be warmer tomorrow, {self.a} or {self.b}? Answer with the city.", {}

    def get_tools(self):
        city = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
        return [
            {"name": "temperature_now", "description": "The temperature in a city right now (°C).", "parameters": city},
            {"name": "record_high", "description": "The hottest day ever measured in a city (°C).", "parameters": city},
            {"name": "forecast", "description": "Tomorrow's forecast high in a city (°C).", "parameters": city},
        ]

    def execute_tool(self, name, arguments):
        c = str(arguments.get("city", "")).strip().title()
        if c not in CITIES:
            return f"No data for {c!r}."
        table = {"temperature_now": self.today, "record_high": self.record, "forecast": self.tomorrow}[name]
        return f"{table[c]} °C"

    def step(self, answer):
        ok = str(answer).strip().title() == self.answer
        return ("Correct." if ok else f"No, {self.answer}."), float(ok), True, False, {"success": ok}

# --- solver ---
import json
import re


def solve(observations):
    a, b = re.search(r"warmer tomorrow, (\w+) or (\w+)\?", observations[0]).groups()
    if len(observations) < 3:
        return json.dumps({"name": "forecast", "arguments": {"city": [a, b][len(observations) - 1]}})
    ta, tb = (int(re.match(r"-?\d+", o).group()) for o in observations[1:3])
    return json.dumps({"name": "answer", "arguments": {"answer": a if ta > tb else b}})
