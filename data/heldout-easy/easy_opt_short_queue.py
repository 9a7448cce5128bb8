# skill: optimisation
# setting: games
# hint: The fastest lane is the one with the fewest people waiting.
import random
import re


class ShortQueueEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        lanes = rng.randint(3, 5)
        people = rng.sample(range(1, 12), lanes)
        self.answer = people.index(min(people)) + 1
        self.lanes = lanes
        lines = [f"Lane {i + 1}: {p} {'person' if p == 1 else 'people'} waiting" for i, p in enumerate(people)]
        self.tries, self.done, self.won = 0, False, False
        obs = ("Every shopper takes the same time at the till.\n" + "\n".join(lines)
               + "\nWhich lane gets you out first? Reply with \\boxed{LANE NUMBER}. You have 3 tries.")
        return obs, {}

    def step(self, action):
        if self.done:
            return "Episode over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        text = str(action)
        box = re.findall(r"\\boxed\{([^{}]*)\}", text)
        found = re.findall(r"[0-9]+", box[-1] if box else text)
        n = int(found[-1]) if found and len(found[-1]) < 7 else None
        if n == self.answer:
            self.done = self.won = True
            return "Correct!", [1.0, 0.6, 0.3][self.tries - 1], True, False, {"success": True}
        msg = "Name one lane." if n is None or not 1 <= n <= self.lanes else f"Lane {n} is not the shortest."
        self.done = self.tries >= self.MAX_TRIES
        tail = f" No tries left; it was lane {self.answer}." if self.done else " Try again."
        return msg + tail, 0.0, self.done, False, {"success": False}


# --- solver ---
import re


def solve(observations):
    lanes = [(int(n), int(lane)) for lane, n in re.findall(r"Lane (\d+): (\d+)", observations[0])]
    return "\\boxed{%d}" % min(lanes)[1]
