# skill: causal-inference
# setting: games
# hint: Severity influences both who got the drug and who recovered, so the pooled totals can mislead. Compare treated and untreated recovery rates within each severity group, as fractions.
import random
import re
from fractions import Fraction


class SimpsonsParadoxEnv:
    SIZES = [20, 30, 40, 50, 60, 80, 100, 120]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        helps, paradox = rng.random() < 0.5, rng.random() < 0.6
        sign = 1 if helps else -1
        while True:
            rows = []
            for base in (rng.uniform(0.6, 0.9), rng.uniform(0.15, 0.45)):
                n_t, n_u = rng.choice(self.SIZES), rng.choice(self.SIZES)
                effect = sign * rng.uniform(0.08, 0.2)
                rows.append((n_t, round(n_t * min(0.95, max(0.05, base + effect))), n_u, round(n_u * base)))
            within = [Fraction(rt, nt) - Fraction(ru, nu) for nt, rt, nu, ru in rows]
            pooled = Fraction(sum(r[1] for r in rows), sum(r[0] for r in rows)) - \
                Fraction(sum(r[3] for r in rows), sum(r[2] for r in rows))
            if all(d * sign > 0 for d in within) and pooled != 0 and (pooled * sign < 0) == paradox:
                break
        self.answer = "helps" if helps else "hurts"
        self.done, self.won = False, False
        lines = [f"- {g} cases: {nt} treated, {rt} recovered; {nu} untreated, {ru} recovered."
                 for g, (nt, rt, nu, ru) in zip(["Mild", "Severe"], rows)]
        obs = (
            "A hospital records patients by severity and by whether they got a new drug (doctors chose who got it):\n"
            + "\n".join(lines)
            + "\nTaking severity into account, does the drug help or hurt recovery? "
            "Answer \\boxed{helps} or \\boxed{hurts}. You have one attempt."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.done = True
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        words = set(re.findall(r"[a-z]+", boxed[-1].lower())) if boxed else set()
        says_help = bool(words & {"help", "helps", "helped", "improves", "better"})
        says_hurt = bool(words & {"hurt", "hurts", "harms", "worsens", "worse"})
        if says_help == says_hurt:
            return "No clear answer (helps or hurts) was given. Episode over.", 0.0, True, False, {"success": False}
        self.won = ("helps" if says_help else "hurts") == self.answer
        msg = "Correct!" if self.won else f"Wrong: within each severity group, the drug {self.answer} recovery."
        return msg, float(self.won), True, False, {"success": self.won}
