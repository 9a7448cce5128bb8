# skill: causal-inference
# setting: games
# hint: A failure raises the alarm of its own unit and of everything downstream, never upstream. Look for the alarmed unit whose feeding units are all quiet.
import random
import re


class RootCauseAlarmsEnv:
    UNITS = ["pump", "filter", "heater", "mixer", "valve", "tank", "cooler", "press"]
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def _downstream(self, unit):
        seen, todo = {unit}, [unit]
        while todo:
            x = todo.pop()
            for a, b in self.links:
                if a == x and b not in seen:
                    seen.add(b)
                    todo.append(b)
        return seen

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        order = rng.sample(self.UNITS, rng.randint(6, 7))
        while True:
            pairs = {tuple(sorted(rng.sample(range(len(order)), 2))) for _ in range(len(order) + 1)}
            self.links = [(order[a], order[b]) for a, b in sorted(pairs)]
            self.fault = rng.choice(order[:-2])
            self.alarms = self._downstream(self.fault)
            if 2 <= len(self.alarms) < len(order):
                break
        self.units = order
        self.tries, self.done, self.won = 0, False, False
        shown = rng.sample(self.links, len(self.links))
        obs = (
            f"A plant has units {', '.join(sorted(order))}. Material flows along these links:\n"
            + "\n".join(f"- {a} feeds {b}" for a, b in shown)
            + "\nExactly one unit has failed. A failed unit raises its own alarm, and the failure spreads along the "
            f"links to every unit downstream. Alarms are now on at: {', '.join(sorted(self.alarms))}. All other units are "
            f"quiet. Which unit failed? Put its name in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        words = [w for w in re.findall(r"[a-z]+", boxed[-1].lower()) if w in self.units] if boxed else []
        guess = words[0] if len(set(words)) == 1 else None
        if guess == self.fault:
            self.done, self.won = True, True
            return "Correct, that unit failed!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Name exactly one unit inside \\boxed{...}."
        elif guess not in self.alarms:
            msg = f"The {guess} has no alarm, so it did not fail."
        else:
            msg = f"A failure in the {guess} would not explain all the alarms."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the {self.fault} failed.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
