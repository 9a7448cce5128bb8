# skill: logical-deduction
# setting: games
# hint: Knights always tell the truth and knaves always lie. Assume the first speaker is a knight and follow the consequences; a contradiction means they are a knave. Recheck every statement at the end.
import itertools
import random
import re


class KnightsKnavesEnv:
    NAMES = ["Ada", "Bo", "Cy"]
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def _says(self, stmt, world):
        kind, a, b = stmt
        if kind == "knight":
            return world[a]
        if kind == "knave":
            return not world[a]
        return (world[a] == world[b]) == (kind == "same")

    def _text(self, speaker, stmt):
        kind, a, b = stmt
        if kind in ("knight", "knave"):
            return f"{self.NAMES[a]} is a {kind}."
        pair = [self.NAMES[i] for i in (a, b) if i != speaker] + (["I"] if speaker in (a, b) else [])
        return f"{pair[0]} and {pair[1]} are {'the same kind' if kind == 'same' else 'different kinds'}."

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        while True:
            stmts = []
            for s in range(3):
                others = [i for i in range(3) if i != s]
                kind = rng.choice(["knight", "knave", "same", "diff"])
                a, b = (rng.choice(others), None) if kind in ("knight", "knave") else sorted(rng.sample(range(3), 2))
                stmts.append((kind, a, b))
            worlds = [w for w in itertools.product([True, False], repeat=3)
                      if all(self._says(st, w) == w[s] for s, st in enumerate(stmts))]
            if len(worlds) == 1:
                break
        self.answer = worlds[0]
        self.tries, self.done, self.won = 0, False, False
        lines = "\n".join(f"{self.NAMES[s]} says: \"{self._text(s, st)}\"" for s, st in enumerate(stmts))
        obs = (
            "On this island every person is a knight (always tells the truth) or a knave (always lies).\n"
            f"{lines}\nWho is a knight and who is a knave? Give each name with knight or knave, "
            "e.g. \\boxed{Ada=..., Bo=..., Cy=...}. You have 2 attempts."
        )
        return obs, {}

    def _parse(self, action):
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        if not boxed:
            return None
        pairs = dict(re.findall(r"(ada|bo|cy)\W+(?:is\W+)?(?:an?\W+)?(knight|knave)", boxed[-1].lower()))
        if len(pairs) == 3:
            return tuple(pairs[n.lower()] == "knight" for n in self.NAMES)
        kinds = re.findall(r"knight|knave", boxed[-1].lower())
        return tuple(k == "knight" for k in kinds) if len(kinds) == 3 else None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        guess = self._parse(action)
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Give all three names, each with knight or knave, inside \\boxed{...}."
        else:
            msg = f"Not quite: {sum(g == a for g, a in zip(guess, self.answer))} of 3 are right."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return msg + " Out of attempts.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
