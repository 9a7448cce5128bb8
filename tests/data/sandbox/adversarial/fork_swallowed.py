# expect: ok
# phase: -
import os

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        for _ in range(50):
            try:
                if os.fork() == 0:
                    os._exit(0)
            except OSError:
                pass
        return "ok", 0.0, False, False, {}
