# skill: logical-deduction
# setting: games
# hint: P is sufficient for Q if every number with P also has Q, and necessary if every number with Q also has P; look for a counterexample in each direction.
import random
import re


class NecessarySufficientEnv:
    DIVS = [2, 3, 4, 6, 8, 9, 12]

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        p, q = rng.sample(self.DIVS, 2)
        if rng.random() < 0.2:
            q = p
            p_text = f"being a multiple of {p}"
            q_text = f"being divisible by {q}"
        else:
            p_text = f"being divisible by {p}"
            q_text = f"being divisible by {q}"
        suff = True
        nec = True
        for n in range(1, 200):
            if n % p == 0 and n % q != 0:
                suff = False
            if n % q == 0 and n % p != 0:
                nec = False
        if suff and nec:
            self.answer = "both"
        elif suff:
            self.answer = "sufficient"
        elif nec:
            self.answer = "necessary"
        else:
            self.answer = "neither"
        self.done, self.won = False, False
        obs = (
            f"For a whole number n, consider P: {p_text}, and Q: {q_text}.\n"
            "Is P a sufficient condition for Q, a necessary one, both, or neither? "
            "Answer \\boxed{sufficient}, \\boxed{necessary}, \\boxed{both} or \\boxed{neither}. "
            "You have one attempt."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        guess = boxed[-1].strip().lower() if boxed else ""
        self.done = True
        if guess == self.answer:
            self.won = True
            return "Correct!", 1.0, True, False, {"success": True}
        return f"Wrong: the answer was {self.answer}.", 0.0, True, False, {"success": False}
