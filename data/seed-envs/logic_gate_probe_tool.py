# skill: logical-deduction
# setting: tool-use
# hint: Probe the inputs 00, 01 and 11 and compare the three outputs with each gate's truth table to rule gates out.
import json
import random
import re


class GateProbeEnv:
    MAX_STEPS = 6
    GATES = {"AND": "0001", "OR": "0111", "XOR": "0110", "NAND": "1110", "NOR": "1000", "XNOR": "1001"}

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.gate = rng.choice(sorted(self.GATES))
        self.steps, self.done, self.won = 0, False, False
        obs = (
            "A chip holds one gate: AND, OR, XOR, NAND, NOR or XNOR, with inputs a and b.\n"
            "Tools (reply with one JSON call per turn: {\"name\": ..., \"arguments\": {...}}):\n"
            "- probe {\"a\": 0 or 1, \"b\": 0 or 1} : the output\n"
            "- submit {\"gate\": name} : name the gate (ends the task)\n"
            f"You have {self.MAX_STEPS} turns."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        match = re.search(r"\{.*\}", str(action), re.S)
        try:
            call = json.loads(match.group(0))
            name, args = call["name"], call["arguments"]
            a, b = str(args.get("a")), str(args.get("b"))
        except Exception:
            name, args, a, b = None, {}, "", ""
        if name == "submit":
            self.done = True
            self.won = str(args.get("gate", "")).strip().upper() == self.gate
            obs = "Correct!" if self.won else f"Wrong, it was {self.gate}."
            return obs, float(self.won), True, False, {"success": self.won}
        if name == "probe" and a in ("0", "1") and b in ("0", "1"):
            obs = f"a={a}, b={b} -> output {self.GATES[self.gate][2 * int(a) + int(b)]}."
        else:
            obs = "Use probe (a, b are 0 or 1) or submit."
        if self.steps >= self.MAX_STEPS:
            self.done = True
            return obs + " Out of turns.", 0.0, False, True, {"success": False}
        return obs, 0.0, False, False, {"success": False}
