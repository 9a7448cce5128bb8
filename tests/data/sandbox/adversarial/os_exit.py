# expect: crashed
# phase: step
import os

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        os._exit(7)
        return "ok", 0.0, False, False, {}
