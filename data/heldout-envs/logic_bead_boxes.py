# skill: logical-deduction
# setting: games
# hint: Every label is wrong, so each box holds something other than its label; use the drawn bead to rule out options for that box, then the other boxes are forced.
import random
import re


class BeadBoxesEnv:
    KINDS = ["red", "blue", "mixed"]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        while True:
            shift = rng.choice([1, 2])
            contents = [self.KINDS[(i + shift) % 3] for i in range(3)]
            pick = rng.randrange(3)
            bead = contents[pick] if contents[pick] != "mixed" else rng.choice(["red", "blue"])
            worlds = []
            for s in (1, 2):
                world = [self.KINDS[(i + s) % 3] for i in range(3)]
                if world[pick] in (bead, "mixed"):
                    worlds.append(world)
            sure = [i for i in range(3) if i != pick and all(w[i] == contents[i] for w in worlds)]
            if sure:
                break
        self.query = rng.choice(sure)
        self.answer = contents[self.query]
        self.done, self.won = False, False
        obs = (
            "Three boxes are labeled 'red', 'blue' and 'mixed'. One holds only red beads, one only blue "
            "beads, one a mix; every label is wrong.\n"
            f"You draw one bead from the box labeled '{self.KINDS[pick]}' and it is {bead}.\n"
            f"What does the box labeled '{self.KINDS[self.query]}' hold? "
            "Answer \\boxed{red}, \\boxed{blue} or \\boxed{mixed}. You have one attempt."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.done = True
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = boxed[-1].strip().lower() if boxed else ""
        if guess.startswith("mix"):
            guess = "mixed"
        if guess == self.answer:
            self.won = True
            return "Correct!", 1.0, True, False, {"success": True}
        return f"Wrong: {self.answer}.", 0.0, True, False, {"success": False}
