# skill: logical-deduction
# setting: games
# hint: Treat each clue as an arrow from the denser sample to the lighter one; the densest sample has no arrow into it, and following single arrows step by step gives the full order.
import random
import re


class DensityRankingEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        order = rng.sample("ABCDE", 5)
        clues = [(order[i], order[i + 1]) for i in range(4)]
        while len(clues) < 6:
            i, j = sorted(rng.sample(range(5), 2))
            if (order[i], order[j]) not in clues:
                clues.append((order[i], order[j]))
        rng.shuffle(clues)
        self.answer = "".join(order)
        self.tries, self.done, self.won = 0, False, False
        lines = "\n".join(f"- Sample {a} is denser than sample {b}." for a, b in clues)
        obs = (
            "A lab measured five samples A, B, C, D and E; no two have the same density.\n"
            f"{lines}\n"
            "List the samples from densest to least dense, e.g. \\boxed{EDCBA}. You have 2 attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = re.sub(r"[^A-E]", "", boxed[-1].upper()) if boxed else ""
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"Wrong. The order was {self.answer}.", 0.0, True, False, {"success": False}
        return "Wrong. One attempt left.", 0.0, False, False, {"success": False}
