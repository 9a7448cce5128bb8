# expect: exception
# phase: step
import os, signal

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        os.kill(os.getppid(), signal.SIGKILL)
        return "ok", 0.0, False, False, {}
