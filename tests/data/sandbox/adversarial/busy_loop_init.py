# expect: timeout
# phase: load


class AdvEnv:
    def __init__(self):
        while True:
            pass

    def reset(self, seed=None):
        return "ready", {}

    def step(self, action):
        return "ok", 0.0, True, False, {}
