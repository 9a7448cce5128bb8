class EndlessEnv:
    def reset(self, seed=None):
        return "Keep talking.", {}

    def step(self, action):
        return "More.", 0.0, False, False, {}
