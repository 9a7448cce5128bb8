# expect: exception
# phase: reset
# A file's times outside the scratch folder (moved to the year 2100).
import os

class AdvEnv:
    def reset(self, seed=None):
        os.utime('{{SECRET}}', (4102444800, 4102444800))
        return "ready", {}

    def step(self, action):
        return "ok", 0.0, False, False, {}
