# expect: timeout
# phase: load
while True:
    pass

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        pass
        return "ok", 0.0, False, False, {}
