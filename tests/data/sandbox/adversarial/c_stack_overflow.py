# expect: crashed
# phase: step
import sys

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        sys.setrecursionlimit(10**8)
        class R:
            def __repr__(self):
                return repr(self)
        repr(R())
        return "ok", 0.0, False, False, {}
