# expect: invalid_result
# phase: step

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        return 'big', 1000.0, False, False, {}
        return "ok", 0.0, False, False, {}
