# skill: causal-inference
# setting: games
# hint: The effect in a group is its treated rate minus its untreated rate; compare these differences, not the treated rates alone.
import random
import re


class EffectModifierEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        groups = ["children", "teens", "adults", "seniors"]
        gains = rng.sample(range(2, 20), 4)
        self.names = groups
        self.answer = groups[gains.index(max(gains))]
        lines = []
        for g, gain in zip(groups, gains):
            base = rng.randint(30, 75)
            lines.append(f"- {g}: {base + gain}% recover with the vaccine, {base}% without")
        obs = (
            "A randomized trial of a flu vaccine reports recovery within a week by age group:\n"
            + "\n".join(lines)
            + "\nIn which group does the vaccine cause the largest gain in recovery? "
            f"Put the group in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        self.tries, self.done, self.won = 0, False, False
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        words = [w for w in re.findall(r"[a-z]+", boxed[-1].lower()) if w in self.names] if boxed else []
        guess = words[0] if len(set(words)) == 1 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Name exactly one option inside \\boxed{...}." if guess is None else f"{guess} is not right."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
