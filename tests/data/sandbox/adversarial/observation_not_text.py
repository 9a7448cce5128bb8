# expect: invalid_result
# phase: reset

class AdvEnv:
    def reset(self, seed=None):
        return {'board': [1, 2]}, {}
        return "ready", {}

    def step(self, action):
        pass
        return "ok", 0.0, False, False, {}
