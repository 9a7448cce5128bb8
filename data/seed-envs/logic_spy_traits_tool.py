# skill: logical-deduction
# setting: tool-use
# hint: Each yes-or-no answer rules out half the suspects; ask about one trait from each group.
import json
import random
import re


class SpyTraitsEnv:
    MAX_STEPS = 6
    NAMES = ["Ada", "Bo", "Cy", "Dia", "Eli", "Flo", "Gus", "Hal"]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        combos = [(c, b, d) for c in ("white", "green") for b in ("red", "blue") for d in ("physics", "biology")]
        rng.shuffle(combos)
        self.people = dict(zip(self.NAMES, combos))
        self.spy = rng.choice(self.NAMES)
        self.steps, self.done, self.won = 0, False, False
        rows = "\n".join(f"- {n}: {c} coat, {b} badge, {d}" for n, (c, b, d) in self.people.items())
        obs = (
            f"One of these scientists is a spy:\n{rows}\n"
            "Tools (reply with one JSON call per turn: {\"name\": ..., \"arguments\": {...}}):\n"
            "- ask {\"trait\": word} : does the spy have this trait? (yes or no)\n"
            "- accuse {\"person\": name} : name the spy (ends the task)\n"
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
            word = str(args.get("trait")).lower()
        except Exception:
            name, args, word = None, {}, ""
        if name == "accuse":
            self.done = True
            self.won = str(args.get("person")).strip().title() == self.spy
            obs = "Correct!" if self.won else f"Wrong: {self.spy}."
            return obs, float(self.won), True, False, {"success": self.won}
        obs = "Invalid call."
        if name == "ask":
            obs = f"{word}: {'yes' if word in self.people[self.spy] else 'no'}."
        self.done = self.steps >= self.MAX_STEPS
        return obs, 0.0, False, self.done, {"success": False}
