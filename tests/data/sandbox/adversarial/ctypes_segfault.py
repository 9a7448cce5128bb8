# expect: crashed
# phase: step
import ctypes

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        ctypes.string_at(0)
        return "ok", 0.0, False, False, {}
