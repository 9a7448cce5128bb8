# expect: exception
# phase: step
import socket

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        s = socket.create_connection(('127.0.0.1', {{PORT}}), timeout=0.2)
        s.sendall(b'escaped')
        return "ok", 0.0, False, False, {}
