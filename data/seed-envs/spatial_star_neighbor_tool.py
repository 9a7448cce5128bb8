# skill: spatial-reasoning
# setting: tool-use
# hint: Locate all four stars and compare squared distances dx*dx + dy*dy + dz*dz to the home star.
import json
import random
import re


class StarNeighborEnv:
    MAX_STEPS = 7

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        names = rng.sample(["Vega", "Deneb", "Rigel", "Mira", "Altair"], 4)
        self.pos, self.d2 = {}, {}
        for n in names:
            self.pos[n] = (rng.randint(-9, 9), rng.randint(-9, 9), rng.randint(-9, 9))
            self.d2[n] = sum((a - b) ** 2 for a, b in zip(self.pos[n], self.pos[names[0]]))
        self.d2.pop(names[0])
        self.answer = min(self.d2, key=self.d2.get)
        self.steps, self.done, self.won = 0, False, False
        obs = (
            f"Which of the stars {', '.join(names[1:])} is closest to {names[0]}?\n"
            "Tools (reply with one JSON call per turn: {\"name\": ..., \"arguments\": {...}}):\n"
            "- locate {\"star\": name} : its (x, y, z) position in light-years\n"
            "- submit {\"star\": name} : your answer (ends the task)\n"
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
            name, star = call["name"], str(call["arguments"]["star"]).title()
        except Exception:
            name, star = None, None
        if name == "submit":
            self.done, self.won = True, self.d2.get(star) == self.d2[self.answer]
            obs = "Correct!" if self.won else f"No; it was {self.answer}."
            return obs, float(self.won), True, False, {"success": self.won}
        if name == "locate" and star in self.pos:
            obs = f"{star} is at {self.pos[star]}."
        else:
            obs = "Error: use locate or submit."
        self.done = self.steps >= self.MAX_STEPS
        return obs, 0.0, False, self.done, {"success": False}
