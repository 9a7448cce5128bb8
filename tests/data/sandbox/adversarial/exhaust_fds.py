# expect: exception
# phase: step
import os

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        fds = []
        while True: fds.append(os.open('/dev/null', os.O_RDONLY))
        return "ok", 0.0, False, False, {}
