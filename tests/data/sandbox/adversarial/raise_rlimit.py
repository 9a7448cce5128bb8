# expect: exception
# phase: reset
import resource

class AdvEnv:
    def reset(self, seed=None):
        resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        return "ready", {}

    def step(self, action):
        pass
        return "ok", 0.0, False, False, {}
