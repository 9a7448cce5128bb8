# expect: ok
# phase: -
import ctypes, os

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        libc = ctypes.CDLL(None)
        r = libc.syscall(57)
        if r == 0:
            import time; time.sleep(1000)
        return 'fork=%d' % r, 0.0, False, False, {}
        return "ok", 0.0, False, False, {}
