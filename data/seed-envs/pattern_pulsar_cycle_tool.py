# skill: pattern-recognition
# setting: tool-use
# hint: Read minutes 0, 1, 2, ... until the values start repeating; that gives the cycle length, and the remainder of the target minute picks the value.
import json
import random
import re


class PulsarCycleEnv:
    MAX_STEPS = 8

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.cycle = rng.sample(range(10, 100), rng.randint(3, 5))
        self.target = rng.randint(500, 999)
        self.answer = self.cycle[self.target % len(self.cycle)]
        self.steps, self.done, self.won = 0, False, False
        obs = (
            "A pulsar's brightness is measured once a minute and repeats one fixed cycle. "
            f"What is the brightness at minute {self.target}?\n"
            "One JSON call per turn, {\"name\": ..., \"arguments\": {...}}. Tools:\n"
            "- read {\"minute\": int} : brightness at a minute from 0 to 20\n"
            "- submit {\"value\": int} : answer, ends the task\n"
            f"You have {self.MAX_STEPS} turns."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        try:
            call = json.loads(re.search(r"\{.*\}", str(action), re.S).group(0))
            name, args = call["name"], dict(call["arguments"])
        except Exception:
            name, args = None, {}
        if name == "read":
            m = args.get("minute")
            if m in range(21):
                obs = f"Minute {m}: brightness {self.cycle[int(m) % len(self.cycle)]}."
            else:
                obs = "Use a minute from 0 to 20."
        elif name == "submit":
            self.done, self.won = True, str(args.get("value")).strip() == str(self.answer)
            obs = "Correct!" if self.won else f"No, it is {self.answer}."
        else:
            obs = "Call read or submit."
        if self.steps >= self.MAX_STEPS and not self.done:
            self.done, obs = True, obs + " Out of turns."
        return obs, float(self.won), self.done, False, {"success": self.won}
