# skill: logical-deduction
# setting: games
# hint: HINT-MARKER-CRASH nothing helps here
class CrashEnv:
    def reset(self, seed=None):
        self.turn = 0
        return "Say anything; this environment breaks on the second step.", {}

    def step(self, action):
        self.turn += 1
        if self.turn >= 2:
            raise RuntimeError("broken on purpose")
        return "Again.", 0.25, False, False, {}
