class BigRewardEnv:
    def reset(self, seed=None):
        return "Say anything.", {}

    def step(self, action):
        return "Thanks.", 5.0, True, False, {}
