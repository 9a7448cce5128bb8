import os


class CoinEnv:
    def reset(self, seed=None):
        self.side = "heads" if os.urandom(1)[0] % 2 else "tails"
        self.nonce = os.urandom(4).hex()
        return "Toss %s: heads or tails? Answer \\boxed{side}." % self.nonce, {}

    def step(self, action):
        win = self.side in action
        return ("Right." if win else "Wrong."), float(win), True, False, {"success": win}
