# expect: exception
# phase: reset
# Another process's scheduling: the worker's priority.
import os

class AdvEnv:
    def reset(self, seed=None):
        os.setpriority(os.PRIO_PROCESS, os.getppid(), 19)
        return "ready", {}

    def step(self, action):
        return "ok", 0.0, False, False, {}
