# skill: spatial-reasoning
# setting: games
# hint: Begin at the starting floor, add each ride up and subtract each ride down.
import random
import re


class ElevatorFloorEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        floor = start = rng.randint(1, 10)
        rides = []
        for _ in range(rng.randint(2, 3)):
            d = rng.randint(1, 6) * rng.choice([1, -1])
            if not 0 <= floor + d <= 20:
                d = -d
            floor += d
            rides.append(f"{'up' if d > 0 else 'down'} {abs(d)}")
        self.answer = floor
        self.tries, self.done, self.won = 0, False, False
        obs = (f"You get in a lift on floor {start}. It goes {', then '.join(rides)} floors.\n"
               "Which floor are you on now? Answer as \\boxed{NUMBER}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        box = re.findall(r"\\boxed\{([^{}]*)\}", str(action)) or [str(action)]
        nums = re.findall(r"-?[0-9]+", box[-1])
        f = int(nums[-1]) if nums and len(nums[-1]) < 7 else None
        if f == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = "Give a floor." if f is None else f"You are {'below' if f > self.answer else 'above'} floor {f}."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" Out of tries: {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}
