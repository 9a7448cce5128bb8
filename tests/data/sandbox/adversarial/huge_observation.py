# expect: output_too_large
# phase: step

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        return 'x' * (8 << 20), 0.0, False, False, {}
        return "ok", 0.0, False, False, {}
