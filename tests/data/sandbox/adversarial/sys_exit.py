# expect: exception
# phase: step
import sys

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        sys.exit(3)
        return "ok", 0.0, False, False, {}
