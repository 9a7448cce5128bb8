# skill: logical-deduction
# setting: games
# hint: Work through the gates in order, writing down each wire's 0 or 1 before using it; AND needs both inputs 1, OR needs at least one, XOR needs exactly one.
import random
import re


class CircuitOutputEnv:
    def __init__(self):
        self.reset()

    def _gate(self, kind, x, y):
        if kind == "AND":
            return x & y
        if kind == "OR":
            return x | y
        return x ^ y

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        value = {}
        lines = ""
        for w in ["a", "b", "c"]:
            value[w] = rng.randint(0, 1)
        inputs = ", ".join(f"{w} = {value[w]}" for w in ["a", "b", "c"])
        wires = ["a", "b", "c"]
        for i in range(rng.randint(3, 4)):
            x, y = rng.sample(wires, 2)
            kind = rng.choice(["AND", "OR", "XOR"])
            name = f"w{i + 1}"
            value[name] = self._gate(kind, value[x], value[y])
            if rng.random() < 0.3:
                value[name] = 1 - value[name]
                lines += f"- {name} = NOT ({x} {kind} {y})\n"
            else:
                lines += f"- {name} = {x} {kind} {y}\n"
            wires.append(name)
        gates = wires[3:]
        self.answer = ",".join(str(value[g]) for g in gates)
        self.done, self.won = False, False
        obs = (
            f"A logic circuit has inputs {inputs}. Gates:\n{lines}"
            f"Give the values of {', '.join(gates)} in order, like \\boxed{{{','.join('0' for g in gates)}}}. "
            "You have one attempt."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = re.sub(r"\s", "", boxed[-1]) if boxed else ""
        self.done = True
        if guess == self.answer:
            self.won = True
            return "Correct!", 1.0, True, False, {"success": True}
        return f"Wrong: the values were {self.answer}.", 0.0, True, False, {"success": False}
