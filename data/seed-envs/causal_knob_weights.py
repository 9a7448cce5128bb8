# skill: causal-inference
# setting: games
# hint: First set all knobs to 0 to see the baseline, then raise one knob at a time to 1; the change in the reading is that knob's effect.
import random
import re


class KnobWeightsEnv:
    MAX_STEPS = 8

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.weights = [rng.randint(-5, 9) for _ in range(3)]
        self.offset = rng.randint(10, 40)
        self.steps, self.done, self.won = 0, False, False
        obs = (
            "A heater has three knobs. The temperature it reaches is a fixed offset plus a hidden whole-number "
            "effect per unit of each knob. Each turn, either test a setting with \\boxed{set X Y Z} (three whole "
            "numbers from 0 to 5) and read the temperature, or give the three effects with "
            f"\\boxed{{answer W1, W2, W3}}. The answer ends the game. You have {self.MAX_STEPS} turns."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.steps += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        text = boxed[-1].strip().lower() if boxed else ""
        nums = [int(v) for v in re.findall(r"-?\d+", text)]
        if text.startswith("answer"):
            self.done, self.won = True, nums == self.weights
            msg = "Correct effects!" if self.won else f"Wrong; the effects were {self.weights}."
            return msg, float(self.won), True, False, {"success": self.won}
        if text.startswith("set") and len(nums) == 3 and all(0 <= v <= 5 for v in nums):
            temp = self.offset
            for w, v in zip(self.weights, nums):
                temp += w * v
            msg = f"With knobs {nums[0]}, {nums[1]}, {nums[2]} the temperature is {temp}."
        else:
            msg = "Use \\boxed{set X Y Z} or \\boxed{answer W1, W2, W3}."
        left = self.MAX_STEPS - self.steps
        self.done = left <= 0
        return f"{msg} Turns left: {left}.", 0.0, False, self.done, {"success": False}
