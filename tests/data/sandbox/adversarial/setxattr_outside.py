# expect: exception
# phase: reset
# An extended attribute planted on a file outside the scratch folder.
import os

class AdvEnv:
    def reset(self, seed=None):
        os.setxattr('{{SECRET}}', 'user.spade_planted', b'planted')
        return "ready", {}

    def step(self, action):
        return "ok", 0.0, False, False, {}
