# skill: causal-inference
# setting: games
# hint: Grades rise steadily with the test score anyway; the scholarship effect is only the extra jump at the cutoff beyond the usual step between neighbouring bands.
import random
import re


class ScoreCutoffEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        step = rng.randint(1, 4)
        jump = rng.randint(3, 9)
        base = rng.randint(50, 65)
        cut = rng.randint(3, 5)
        self.answer = jump
        lines = []
        for i in range(8):
            grade = base + step * i + (jump if i >= cut else 0)
            lines.append(f"- score band {60 + 2 * i}: average later grade {grade}")
        obs = (
            f"Students with an entrance score of {60 + 2 * cut} or more get a scholarship; others do not.\n"
            + "\n".join(lines)
            + "\nHow many grade points does the scholarship add for students right at the cutoff? "
            f"Answer with \\boxed{{N}}. You have {self.MAX_TRIES} attempts."
        )
        self.tries, self.done, self.won = 0, False, False
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"-?\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if nums else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        msg = "Put one whole number inside \\boxed{...}." if guess is None else f"{guess} is not right."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the answer was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
