class AEnv:
    def reset(self, seed=None):
        return "a", {}

    def step(self, action):
        return "a", 0.0, True, False, {}


class BEnv:
    def reset(self, seed=None):
        return "b", {}

    def step(self, action):
        return "b", 0.0, True, False, {}
