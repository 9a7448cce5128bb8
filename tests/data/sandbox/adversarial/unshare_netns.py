# expect: exception
# phase: step
import os

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        os.unshare(os.CLONE_NEWUSER)
        return "ok", 0.0, False, False, {}
