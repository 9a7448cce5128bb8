# expect: exception
# phase: step
import os

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        os.execv('/bin/sh', ['sh', '-c', 'touch /tmp/spade-sandbox-canary-exec'])
        return "ok", 0.0, False, False, {}
