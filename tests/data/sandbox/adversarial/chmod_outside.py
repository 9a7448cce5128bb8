# expect: exception
# phase: reset
# File metadata outside the scratch folder: landlock has no right for chmod.
import os

class AdvEnv:
    def reset(self, seed=None):
        os.chmod('{{SECRET}}', 0o666)
        return "ready", {}

    def step(self, action):
        return "ok", 0.0, False, False, {}
