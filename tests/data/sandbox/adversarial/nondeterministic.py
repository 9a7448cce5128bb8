# expect: ok
# phase: -
import os

class AdvEnv:
    def reset(self, seed=None):
        self.x = os.urandom(8).hex()
        return 'secret ' + self.x, {}
        return "ready", {}

    def step(self, action):
        pass
        return "ok", 0.0, False, False, {}
