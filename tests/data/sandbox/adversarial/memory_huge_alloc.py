# expect: memory
# phase: reset

class AdvEnv:
    def reset(self, seed=None):
        x = bytearray(10**12)
        return "ready", {}

    def step(self, action):
        pass
        return "ok", 0.0, False, False, {}
