# skill: logical-deduction
# setting: games
# hint: Check if the rule's condition holds now: if so the result happens, otherwise it does not.
import random
import re

CASES = [
    ("the switch is on", "the switch is off", "the lamp is lit", "Is the lamp lit?"),
    ("the door is open", "the door is shut", "the alarm rings", "Does the alarm ring?"),
    ("all tests pass", "a test fails", "the build is green", "Is the build green?"),
    ("the soil is dry", "the soil is wet", "the pump runs", "Does the pump run?"),
]


class LampRuleEnv:
    MAX_TRIES = 3
    options = ["yes", "no"]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        pos, neg, result, question = rng.choice(CASES)
        holds = rng.random() < 0.5
        self.answer = "yes" if holds else "no"
        self.tries, self.done, self.won = 0, False, False
        obs = (f"Rule: {result} exactly when {pos}.\nRight now {pos if holds else neg}.\n"
               f"{question} Options: yes, no. Answer as \\boxed{{yes}} or \\boxed{{no}}.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        low = str(action).lower()
        low = low.split("\\boxed{")[-1]
        said = [w for w in re.findall(r"[a-z]+", low) if w in ("yes", "no")]
        if said and said[-1] == self.answer:
            self.done = self.won = True
            return "Correct!", (1.0, 0.6, 0.3)[self.tries - 1], True, False, {"success": True}
        note = "Wrong, re-read the rule." if said else "Answer yes or no."
        self.done = self.tries >= self.MAX_TRIES
        return note, 0.0, self.done, False, {"success": False}
