# skill: optimisation
# setting: games
# hint: Always taking the largest coin can fail with these coin values; compare what happens when you use one or two fewer of the largest coin and make up the rest with the middle coin.
import random
import re


class CoinChangeEnv:
    MAX_TRIES = 3

    def __init__(self):
        self.reset()

    def reset(self, seed=None, options=None):
        rng = random.Random(seed)
        trap = rng.random() < 0.6
        while True:
            self.coins = [1] + sorted(rng.sample(range(3, 13), 2))
            self.amount = rng.randint(10, 40)
            best = [0] + [99] * self.amount
            for v in range(1, self.amount + 1):
                best[v] = min(best[v - c] + 1 for c in self.coins if c <= v)
            self.best, greedy, rest = best[self.amount], 0, self.amount
            for c in reversed(self.coins):
                greedy, rest = greedy + rest // c, rest % c
            if (greedy > self.best) == trap:
                break
        self.tries, self.done, self.won = 0, False, False
        obs = (
            f"Pay exactly {self.amount} cents using as few coins as possible. The coins are worth "
            f"{', '.join(map(str, self.coins))} cents, and you have as many of each as you like. "
            "Write the coins you use as a sum inside \\boxed{...}, for example \\boxed{3+1}. "
            f"You have {self.MAX_TRIES} attempts."
        )
        return obs, {}

    def step(self, action):
        if self.done:
            return "The episode is over.", 0.0, True, False, {"success": self.won}
        self.tries += 1
        boxed = re.findall(r"\\boxed\{([^{}]*)\}", str(action))
        parts = re.findall(r"\d+", boxed[-1]) if boxed else []
        used = [int(p) for p in parts if len(p) < 4][:60]
        if not used or len(used) != len(parts):
            msg = "Write the coins as a sum, for example \\boxed{3+1}."
        elif any(c not in self.coins for c in used):
            msg = f"Only coins worth {', '.join(map(str, self.coins))} exist."
        elif sum(used) != self.amount:
            msg = f"Those coins add up to {sum(used)}, not {self.amount}."
        elif len(used) == self.best:
            self.done, self.won = True, True
            return f"Optimal: {len(used)} coins.", 1.0, True, False, {"success": True}
        else:
            msg = f"That works with {len(used)} coins, but fewer coins are possible."
        if self.tries >= self.MAX_TRIES:
            self.done = True
            return f"{msg} Out of attempts; the fewest coins was {self.best}.", 0.0, True, False, {"success": False}
        return f"{msg} Attempts left: {self.MAX_TRIES - self.tries}.", 0.0, False, False, {"success": False}
