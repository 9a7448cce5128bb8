# skill: pattern-recognition
# setting: games
# hint: Find how many hours it takes for the mass to halve, count how many halvings bring the starting mass down to the target, and multiply.
import random
import re


class HalfLifeEnv:
    MAX_TRIES = 2

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        half = rng.randint(2, 9)
        every = rng.choice([half, half * 2])
        halvings = rng.randint(7, 10)
        start = rng.choice([1, 3, 5, 7]) * 2 ** halvings
        readings = []
        for i in range(4):
            hours = i * every
            readings.append(f"after {hours} h: {start // 2 ** (hours // half)} mg")
        self.target = start // 2 ** halvings
        self.answer = halvings * half
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"A lab weighs a radioactive sample at regular times:\n" + "\n".join(readings) + "\n"
            f"After how many hours does it weigh {self.target} mg? "
            f"Put the number of hours in \\boxed{{...}}. You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        nums = re.findall(r"\d+", boxed[-1]) if boxed else []
        guess = int(nums[0]) if len(nums) == 1 and len(nums[0]) < 6 else None
        if guess == self.answer:
            self.done, self.won = True, True
            return "Correct!", 1.0, True, False, {"success": True}
        if guess is None:
            msg = "Put a single whole number of hours inside \\boxed{...}."
        else:
            msg = f"Not {guess} hours; it takes {'longer' if self.answer > guess else 'less time'}."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; it was {self.answer} hours.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
