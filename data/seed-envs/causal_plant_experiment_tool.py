# skill: causal-inference
# setting: tool-use
# hint: The garden log is observational and its factors move together. Run a baseline trial, then switch on one factor at a time; a factor is a cause only if changing it alone changes growth.
import json
import random
import re


class PlantExperimentEnv:
    FACTORS = ["water", "light", "fertilizer", "music"]
    MAX_STEPS = 8

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.causes = sorted(rng.sample(self.FACTORS, rng.randint(1, 2)))
        self.effects = {f: rng.choice([-3, -2, 2, 3, 4, 5]) for f in self.causes}
        self.base = rng.randint(6, 10)
        spurious = rng.choice([f for f in self.FACTORS if f not in self.causes])
        log = []
        for day in range(1, 4):
            s = {f: rng.randint(0, 1) for f in self.FACTORS}
            s[spurious] = s[self.causes[0]]
            on = [f for f in self.FACTORS if s[f]] or ["nothing"]
            log.append(f"  plant {day}: {', '.join(on)} -> {self._growth(s)} cm")
        self.steps, self.done, self.won = 0, False, False
        obs = (
            f"Find which of the factors {', '.join(self.FACTORS)} truly cause a change in plant growth. "
            "Garden log (not an experiment):\n" + "\n".join(log) + "\n"
            "Tools (reply with one JSON call per turn: {\"name\": ..., \"arguments\": {...}}):\n"
            "- run_trial {\"water\": 0|1, \"light\": 0|1, \"fertilizer\": 0|1, \"music\": 0|1} : grow a plant with "
            "exactly these settings (missing factors count as 0) and measure it\n"
            "- submit_causes {\"factors\": [names]} : the complete list of causes (ends the task)\n"
            f"You have {self.MAX_STEPS} turns."
        )
        return obs, {}

    def _growth(self, settings):
        return self.base + sum(self.effects[f] for f in self.causes if settings.get(f))

    @staticmethod
    def _parse(action):
        text, dec = str(action), json.JSONDecoder()
        for match, _ in zip(re.finditer(r"\{", text), range(20)):
            try:
                obj = dec.raw_decode(text, match.start())[0]
            except Exception:
                continue
            if isinstance(obj, dict):
                return obj
        return None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        call = self._parse(action) or {}
        args, name = call.get("arguments", {}), call.get("name")
        if not call or not isinstance(args, dict):
            obs = "Could not read a tool call. Reply with JSON like {\"name\": \"run_trial\", \"arguments\": {\"water\": 1}}."
        elif name == "run_trial":
            settings = {f: str(args.get(f, 0)).strip().lower() in ("1", "true", "on", "yes") for f in self.FACTORS}
            on = [f for f in self.FACTORS if settings[f]] or ["nothing"]
            obs = f"Trial with {', '.join(on)} on: the plant grew {self._growth(settings)} cm."
        elif name == "submit_causes":
            given = args.get("factors")
            given = {str(f).strip().lower() for f in given} if isinstance(given, list) else set()
            self.done, self.won = True, given == set(self.causes)
            obs = "Correct, those are exactly the causes!" if self.won else f"Wrong; the causes were {', '.join(self.causes)}."
            return obs, float(self.won), True, False, {"success": self.won}
        else:
            obs = "Unknown tool. Use run_trial or submit_causes."
        self.done = self.steps >= self.MAX_STEPS
        return obs + " Out of turns." * self.done, 0.0, False, self.done, {"success": False}
