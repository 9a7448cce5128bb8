# skill: causal-inference
# setting: games
# hint: For each patient subtract the pressure with the drug from the pressure without it, then average those drops over all patients.
import random
import re


class PotentialOutcomesEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        n = 6
        ate = rng.randint(3, 12)
        shifts = []
        for _ in range(n // 2):
            k = rng.randint(0, 3)
            shifts += [k, -k]
        rng.shuffle(shifts)
        self.answer = ate
        lines = []
        for i in range(n):
            without = rng.randint(125, 165)
            with_drug = without - ate - shifts[i]
            lines.append(f"- patient {i + 1}: {without} without the drug, {with_drug} with the drug")
        obs = (
            "A simulation shows each patient's blood pressure in both worlds, with and without a drug:\n"
            + "\n".join(lines)
            + "\nWhat is the average causal effect of the drug, as a drop in pressure? "
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
