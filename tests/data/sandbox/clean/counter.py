# skill: counting
# setting: games
# hint: Count upwards from the start value.
import random


class CounterEnv:
    """Guess the next number in a seeded arithmetic sequence."""

    def __init__(self, max_turns=8):
        self.max_turns = max_turns

    def reset(self, seed=None):
        self.rng = random.Random(seed)
        self.start = self.rng.randint(1, 50)
        self.stride = self.rng.randint(2, 9)
        self.turn = 0
        seq = [self.start + i * self.stride for i in range(4)]
        return "Sequence: %s. What comes next? Answer as \\boxed{n}." % seq, {"stride": self.stride}

    def step(self, action):
        self.turn += 1
        import re
        m = re.search(r"\\boxed\{([^{}]*)\}", action)
        want = self.start + 4 * self.stride
        if m and m.group(1).strip() == str(want):
            return "Correct.", 1.0, True, False, {"success": True}
        done = self.turn >= self.max_turns
        return "Wrong, try again.", 0.0, done, False, {"success": False, "turn": self.turn}
