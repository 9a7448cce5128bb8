# expect: timeout
# phase: reset
import time

class AdvEnv:
    def reset(self, seed=None):
        while True:
            try:
                time.sleep(100)
            except BaseException:
                continue
        return "ready", {}

    def step(self, action):
        pass
        return "ok", 0.0, False, False, {}
