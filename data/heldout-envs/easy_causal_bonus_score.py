# skill: causal-inference
# setting: games
# hint: Keep all else fixed; only add or remove the points the changed choice gives.
import random
import re


class BonusScoreEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        who = rng.choice(["Mia", "Leo", "Ava", "Raj"])
        bonus, right = rng.randint(2, 6), rng.randint(3, 12)
        went = rng.random() < 0.5
        actual = right + bonus * went
        self.answer = right + bonus * (not went)
        did, cf = ("went", "had not gone") if went else ("didn't go", "had gone")
        self.tries, self.done, self.won = 0, False, False
        obs = (f"Quiz score = correct answers + {bonus} points for going to review.\n"
               f"{who} got {right} right, {did} to review, and scored {actual}.\n"
               f"What would the score be if {who} {cf}? Answer as \\boxed{{NUMBER}}; 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        part = (re.findall(r"\\boxed\{([^{}]*)\}", str(action)) or [str(action)])[-1]
        nums = re.findall(r"-?[0-9]+", part)
        val = int(nums[-1]) if nums and len(nums[-1]) < 7 else None
        if val == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = f"{val} is too {'high' if val > self.answer else 'low'}." if val is not None else "Number?"
        self.done = self.tries >= self.MAX_TRIES
        tail = f" Out: {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}
