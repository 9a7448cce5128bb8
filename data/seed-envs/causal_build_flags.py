# skill: causal-inference
# setting: games
# hint: The culprit flag is on in every failing build and off in every passing one; check each flag against all rows.
import random
import re


class BuildFlagsEnv:
    FLAGS = ["debug", "cache", "lto", "strict", "async", "simd"]
    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.flags = sorted(rng.sample(self.FLAGS, 4))
        self.answer = rng.choice(self.flags)
        while True:
            rows = [{f: rng.randint(0, 1) for f in self.flags} for _ in range(5)]
            fails = [r[self.answer] for r in rows]
            same = [f for f in self.flags if [r[f] for r in rows] == fails]
            if len(same) == 1 and 0 < sum(fails) < 5:
                break
        lines = []
        for r in rows:
            on = [f for f in self.flags if r[f]] or ["none"]
            lines.append(f"- on: {', '.join(on)} -> {'FAIL' if r[self.answer] else 'pass'}")
        self.done, self.won = False, False
        obs = (
            f"A program has build flags {', '.join(self.flags)}. One flag breaks the build whenever it is on; "
            "the others do nothing. Recent builds:\n" + "\n".join(lines)
            + "\nWhich flag is it? Answer in \\boxed{...}. You have one attempt."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.done = True
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        words = [w for w in re.findall(r"[a-z]+", boxed[-1].lower()) if w in self.flags] if boxed else []
        self.won = len(set(words)) == 1 and words[0] == self.answer
        msg = "Correct!" if self.won else f"Wrong; the {self.answer} flag breaks the build."
        return msg, float(self.won), True, False, {"success": self.won}
