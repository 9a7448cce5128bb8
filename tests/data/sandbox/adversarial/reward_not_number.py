# expect: invalid_result
# phase: step

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        return 'set', {1, 2}, False, False, {}
        return "ok", 0.0, False, False, {}
