# expect: exception
# phase: step
import os

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        os.setsid()
        if os.fork() == 0:
            if os.fork() == 0:
                import time; time.sleep(1000)
            os._exit(0)
        return "ok", 0.0, False, False, {}
