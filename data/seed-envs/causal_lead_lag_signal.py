# skill: causal-inference
# setting: games
# hint: A cause comes before its effect; find the series whose ups and downs reappear in the others an hour or two later.
import random
import re


class LeadLagSignalEnv:
    NAMES = ["oak", "pine", "elm", "ash", "fir", "birch"]
    HOURS = 8

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        self.names = rng.sample(self.NAMES, 3)
        self.answer = self.names[0]
        source = [rng.randint(10, 40) for _ in range(self.HOURS + 2)]
        series = {self.answer: source[2:]}
        for name, lag in zip(self.names[1:], (1, 2)):
            shift = rng.randint(-5, 5)
            series[name] = [v + shift for v in source[2 - lag:self.HOURS + 2 - lag]]
        lines = [f"- {n}: {', '.join(str(v) for v in series[n])}" for n in sorted(self.names)]
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"Three stream gauges named {', '.join(sorted(self.names))} record the water level every hour. "
            "Rain falls near one of them and its water reaches the other two later:\n"
            + "\n".join(lines)
            + "\nWhich gauge is where the changes start? Put its name in \\boxed{...}. You have 2 attempts."
        )
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
        msg = "Name one gauge in \\boxed{...}." if guess is None else f"{guess} only follows."
        if self.tries >= 2:
            self.done = True
            return f"{msg} Out of attempts; it was {self.answer}.", 0.0, True, False, {"success": False}
        return msg + " One attempt left.", 0.0, False, False, {"success": False}
