# skill: logical-deduction
# setting: games
# hint: Make one grid of people against pets and one of people against drinks, cross out every pairing a clue forbids, and use the clues that tie a pet to a drink to carry eliminations across.
import itertools
import random
import re


class PetOwnersEnv:
    PEOPLE = ["Mia", "Noah", "Omar", "Pia", "Quinn"]
    PETS = ["cat", "dog", "parrot", "rabbit", "turtle"]
    DRINKS = ["tea", "coffee", "juice", "milk", "cocoa"]
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def _clue(self, rng):
        i, j = rng.randrange(3), rng.randrange(3)
        person, pet, drink = self.people[i], self.pets[i], self.drinks[i]
        other_pet, other_drink = self.pets[j], self.drinks[j]
        kind = rng.choice(["pet", "drink", "link"])
        if kind == "pet":
            text = f"{person} {'owns' if i == j else 'does not own'} the {other_pet}."
            return text, lambda w: (w[0][i] == other_pet) == (i == j)
        if kind == "drink":
            text = f"{person} {'drinks' if i == j else 'does not drink'} {other_drink}."
            return text, lambda w: (w[1][i] == other_drink) == (i == j)
        text = f"The owner of the {pet} {'drinks' if i == j else 'does not drink'} {other_drink}."
        return text, lambda w: (w[1][w[0].index(pet)] == other_drink) == (i == j)

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.people = rng.sample(self.PEOPLE, 3)
        self.pets = rng.sample(self.PETS, 3)
        self.drinks = rng.sample(self.DRINKS, 3)
        truth = (tuple(self.pets), tuple(self.drinks))
        worlds = list(itertools.product(itertools.permutations(self.pets), itertools.permutations(self.drinks)))
        clues = []
        while len(worlds) > 1:
            text, test = self._clue(rng)
            kept = [w for w in worlds if test(w)]
            if test(truth) and len(kept) < len(worlds):
                clues.append(text)
                worlds = kept
        k = rng.randrange(3)
        self.pet, self.answer = self.pets[k], (self.people[k], self.drinks[k])
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"{', '.join(sorted(self.people))} each own one different pet ({', '.join(sorted(self.pets))}) "
            f"and each prefer one different drink ({', '.join(sorted(self.drinks))}).\n"
            + "\n".join(f"- {c}" for c in clues)
            + f"\nWho owns the {self.pet}, and what does that person drink? Answer as \\boxed{{name, drink}}. "
            f"You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def _parse(self, action):
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        words = set(re.findall(r"[a-z]+", boxed[-1].lower())) if boxed else set()
        names = [p for p in self.people if p.lower() in words]
        drinks = [d for d in self.drinks if d in words]
        return (names[0], drinks[0]) if len(names) == 1 and len(drinks) == 1 else None

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        guess = self._parse(action)
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Give exactly one of the names and one of the drinks, as \\boxed{name, drink}."
        else:
            msg = f"Not correct: the person is {'right' if guess[0] == self.answer[0] else 'wrong'} and the drink is {'right' if guess[1] == self.answer[1] else 'wrong'}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return msg + " Out of attempts.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
