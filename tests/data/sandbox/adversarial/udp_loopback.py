# expect: exception
# phase: step
import socket

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(b'escaped', ('127.0.0.1', {{UDP_PORT}}))
        return "ok", 0.0, False, False, {}
