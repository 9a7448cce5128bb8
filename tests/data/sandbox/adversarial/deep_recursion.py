# expect: exception
# phase: step

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        f = lambda n: f(n + 1)
        f(0)
        return "ok", 0.0, False, False, {}
