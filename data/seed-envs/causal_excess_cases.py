# skill: causal-inference
# setting: games
# hint: The unexposed rate shows how many cases happen anyway; the extra rate in the exposed group times its size counts the cases the exposure caused.
import random
import re


class ExcessCasesEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        r0 = rng.randint(2, 15)
        extra = rng.randint(3, 20)
        thousands = rng.randint(2, 9)
        self.answer = extra * thousands
        obs = (
            "Two groups of factory workers are alike except that one breathes solvent fumes.\n"
            f"- Exposed group: {thousands * 1000} workers, {r0 + extra} cases of asthma per 1000 workers.\n"
            f"- Unexposed group: 5000 workers, {r0} cases of asthma per 1000 workers.\n"
            "How many asthma cases in the exposed group were caused by the fumes? "
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
