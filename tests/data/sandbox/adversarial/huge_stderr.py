# expect: output_too_large
# phase: step
import sys

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        while True: sys.stderr.write('e' * 4096)
        return "ok", 0.0, False, False, {}
