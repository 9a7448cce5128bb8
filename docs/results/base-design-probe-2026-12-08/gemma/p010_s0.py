# skill: causal-inference
# setting: games
# hint: Later releases inherit the bug, so the culprit is the lowest-numbered release that fails.
import random
import re


class FirstBadVersionEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        n = rng.randint(5, 9)
        self.answer = rng.randint(2, n)
        runs = [f"v{v} {'FAIL' if v >= self.answer else 'pass'}" for v in range(1, n + 1)]
        rng.shuffle(runs)
        self.tries, self.done, self.won = 0, False, False
        obs = (f"An app has releases v1 to v{n}. One release added a bug that stayed in all later ones.\n"
               f"Test results (shuffled): {', '.join(runs)}.\n"
               "Which release added the bug? Answer as \\boxed{NUMBER}; 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        box = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"[0-9]+", box[-1] if box else str(action))
        v = int(nums[-1]) if nums and len(nums[-1]) < 7 else None
        if v == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = "Give a number." if v is None else f"Too {self.answer}."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" Out of tries; it was v{self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}
