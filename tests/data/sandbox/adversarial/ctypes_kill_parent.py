# expect: ok
# phase: -
import ctypes, os

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        libc = ctypes.CDLL(None)
        r = libc.syscall(62, os.getppid(), 9)
        r2 = libc.syscall(62, -1, 9)
        return 'kill=%d,%d' % (r, r2), 0.0, False, False, {}
        return "ok", 0.0, False, False, {}
