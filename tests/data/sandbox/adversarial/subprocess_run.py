# expect: exception
# phase: step
import subprocess

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        subprocess.run(['sh', '-c', 'touch /tmp/spade-sandbox-canary-subprocess'])
        return "ok", 0.0, False, False, {}
