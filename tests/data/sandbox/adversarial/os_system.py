# expect: ok
# phase: -
import os

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        r = os.system('touch /tmp/spade-sandbox-canary-system')
        return 'rc=%s' % r, 0.0, False, False, {}
        return "ok", 0.0, False, False, {}
