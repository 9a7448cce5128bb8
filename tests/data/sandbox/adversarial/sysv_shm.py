# expect: exception
# phase: reset
# A System V shared-memory segment under a fixed key: a channel any other episode (or host
# process) can open by the same key. Removed again if it was made, so the test leaves nothing.
import ctypes

class AdvEnv:
    def reset(self, seed=None):
        libc = ctypes.CDLL(None, use_errno=True)
        shmid = libc.shmget(0x5ADE0001, 4096, 0o1000 | 0o666)  # IPC_CREAT
        if shmid < 0:
            raise OSError(ctypes.get_errno(), "shmget")
        libc.shmctl(shmid, 0, None)  # IPC_RMID
        return "segment made", {}

    def step(self, action):
        return "ok", 0.0, False, False, {}
