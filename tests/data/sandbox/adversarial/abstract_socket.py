# expect: exception
# phase: reset
# An abstract Unix socket name: a rendezvous other processes (other episodes) can find.
import socket

class AdvEnv:
    def reset(self, seed=None):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind('\0spade-adversarial-rendezvous')
        s.listen(1)
        self.s = s
        return "ready", {}

    def step(self, action):
        return "ok", 0.0, False, False, {}
