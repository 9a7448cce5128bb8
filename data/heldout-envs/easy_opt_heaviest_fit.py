# skill: optimisation
# setting: games
# hint: Cross out every box heavier than the limit, then take the biggest weight that is left.
import random
import re


class HeaviestFitEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        limit = rng.randint(6, 15)
        low = rng.sample(range(1, limit + 1), rng.randint(1, 3))
        high = rng.sample(range(limit + 1, 21), 4 - len(low))
        boxes = low + high
        rng.shuffle(boxes)
        self.answer = max(low)
        self.tries, self.done, self.won = 0, False, False
        obs = (f"Your bag holds at most {limit} kg. Boxes weigh {', '.join(map(str, boxes))} kg.\n"
               "You may take one box. What is the heaviest box you can carry?\n"
               "Give its weight as \\boxed{NUMBER}; 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        box = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"-?[0-9]+", box[-1] if box else str(action))
        kg = int(nums[-1]) if nums and len(nums[-1]) < 7 else None
        if kg == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = "Give one weight." if kg is None else "Too heavy, or not a box." if kg > self.answer else "Too light."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" Out of tries; it was {self.answer} kg." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}
