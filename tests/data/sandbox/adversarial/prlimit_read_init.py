# expect: exception
# phase: reset
# Reading PID 1's limits (what the host runs and how).
import resource

class AdvEnv:
    def reset(self, seed=None):
        return "pid1 nofile %r" % (resource.prlimit(1, resource.RLIMIT_NOFILE),), {}

    def step(self, action):
        return "ok", 0.0, False, False, {}
