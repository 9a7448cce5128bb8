class BigRewardEnv:
    def reset(self, seed=None):
        return "Say 1.", {}

    def step(self, action):
        return "Thanks.", 5.0 if "1" in action else 0.0, True, False, {}
