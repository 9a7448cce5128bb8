# expect: exception
# phase: reset
# Another process's limits: the worker (the fork server that starts every episode).
import os, resource

class AdvEnv:
    def reset(self, seed=None):
        resource.prlimit(os.getppid(), resource.RLIMIT_CORE, (0, 0))
        return "ready", {}

    def step(self, action):
        return "ok", 0.0, False, False, {}
