# expect: exception
# phase: reset
# A System V message queue under a fixed key (removed again if it was made).
import ctypes

class AdvEnv:
    def reset(self, seed=None):
        libc = ctypes.CDLL(None, use_errno=True)
        q = libc.msgget(0x5ADE0002, 0o1000 | 0o666)  # IPC_CREAT
        if q < 0:
            raise OSError(ctypes.get_errno(), "msgget")
        libc.msgctl(q, 0, None)  # IPC_RMID
        return "queue made", {}

    def step(self, action):
        return "ok", 0.0, False, False, {}
