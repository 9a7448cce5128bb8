# expect: timeout
# phase: step

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        while True: pass
        return "ok", 0.0, False, False, {}
