# expect: exception
# phase: reset
import os

class AdvEnv:
    def reset(self, seed=None):
        os.symlink('{{SECRET}}', 'link')
        return open('link').read(), {}
        return "ready", {}

    def step(self, action):
        pass
        return "ok", 0.0, False, False, {}
