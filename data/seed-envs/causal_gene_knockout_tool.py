# skill: causal-inference
# setting: tool-use
# hint: Knock out one gene at a time; a gene is needed if removing it alone stops the pigment.
import json
import random
import re


class GeneKnockoutEnv:
    GENES = ["ade2", "his3", "leu2", "lys2", "trp1", "ura3"]
    MAX_STEPS = 8

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.needed = sorted(rng.sample(self.GENES, 2))
        self.steps, self.done, self.won = 0, False, False
        obs = (
            f"Exactly two of the yeast genes {', '.join(self.GENES)} are needed for a red pigment.\n"
            "Tools (reply with one JSON call per turn: {\"name\": ..., \"arguments\": {...}}):\n"
            "- knockout {\"gene\": name} : remove one gene and look\n"
            "- submit_genes {\"genes\": [name, name]} : the two needed genes (ends the task)\n"
            f"You have {self.MAX_STEPS} turns."
        )
        return obs, {}

    def _parse(self, action):
        text = str(action)
        try:
            call = json.loads(text[text.index("{"):text.rindex("}") + 1])
            return call.get("name"), dict(call.get("arguments", {}))
        except Exception:
            return None, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        name, args = self._parse(action)
        gene = str(args.get("gene")).strip().lower()
        if name == "submit_genes":
            given = [g for g in self.GENES if g in str(args.get("genes")).lower()]
            self.done, self.won = True, given == self.needed
            obs = "Correct!" if self.won else f"Wrong; it was {' and '.join(self.needed)}."
            return obs, float(self.won), True, False, {"success": self.won}
        if name == "knockout" and gene in self.GENES:
            obs = f"Without {gene}: {'white' if gene in self.needed else 'still red'}."
        else:
            obs = "Unknown tool or gene."
        self.done = self.steps >= self.MAX_STEPS
        return obs + " Out of turns." * self.done, 0.0, False, self.done, {"success": False}
