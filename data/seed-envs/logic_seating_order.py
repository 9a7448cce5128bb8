# skill: logical-deduction
# setting: games
# hint: Turn each clue into a constraint on seat numbers, place anyone whose seat is fixed or forced first, treat 'immediately left of' pairs as a single block, and test each remaining order against every clue.
import itertools
import random
import re


class SeatingOrderEnv:
    POOL = ["Ana", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana"]
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def _clue(self, rng):
        x, y = rng.sample(self.names, 2)
        kind = rng.choice(["seat", "end", "end", "next", "left", "left", "apart", "before", "before"])
        if kind == "seat":
            k = rng.randint(1, 4)
            return f"{x} sits in seat {k}.", lambda p: p[x] == k
        if kind == "end":
            at_end = self.pos[x] in (1, 4)
            return f"{x} {'sits at one of the ends' if at_end else 'does not sit at either end'}.", lambda p: (p[x] in (1, 4)) == at_end
        if kind == "next":
            return f"{x} and {y} sit next to each other.", lambda p: abs(p[x] - p[y]) == 1
        if kind == "apart":
            return f"{x} and {y} do not sit next to each other.", lambda p: abs(p[x] - p[y]) != 1
        if kind == "left":
            return f"{x} sits immediately to the left of {y}.", lambda p: p[y] - p[x] == 1
        return f"{x} sits somewhere to the left of {y}.", lambda p: p[x] < p[y]

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.names = rng.sample(self.POOL, 4)
        self.answer = tuple(rng.sample(self.names, 4))
        self.pos = {n: i + 1 for i, n in enumerate(self.answer)}
        worlds = [{n: i + 1 for i, n in enumerate(p)} for p in itertools.permutations(self.names)]
        clues = []
        while len(worlds) > 1:
            text, test = self._clue(rng)
            kept = [w for w in worlds if test(w)]
            if test(self.pos) and len(kept) < len(worlds):
                clues.append(text)
                worlds = kept
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"{', '.join(sorted(self.names))} sit in a row of four seats, numbered 1 to 4 from left to right.\n"
            + "\n".join(f"- {c}" for c in clues)
            + "\nWho sits where? List the names from left to right inside \\boxed{...}, e.g. \\boxed{name, name, name, name}."
            + f" You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def _parse(self, action):
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        if not boxed:
            return None
        lookup = {n.lower(): n for n in self.names}
        found = [lookup[w] for w in re.findall(r"[a-z]+", boxed[-1].lower()) if w in lookup]
        return tuple(found) if len(found) == 4 and len(set(found)) == 4 else None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        guess = self._parse(action)
        left = self.MAX_TRIES - self.tries
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "List each of the four names exactly once, left to right, inside \\boxed{...}."
        else:
            msg = f"{sum(g == a for g, a in zip(guess, self.answer))} of 4 people are in the right seat."
        if left <= 0:
            self.done = True
            return f"{msg} Out of attempts; the order was {', '.join(self.answer)}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {left}.", 0.0, False, False, {"success": False}
