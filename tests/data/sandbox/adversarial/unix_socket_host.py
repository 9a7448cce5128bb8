# expect: exception
# phase: step
# A daemon listening on a named Unix socket of the host (the test's listener): the network
# namespace does not cover filesystem sockets and landlock does not govern connect().
import socket

class AdvEnv:
    def reset(self, seed=None):
        return "ready", {}

    def step(self, action):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect('{{UNIX_SOCK}}')
        s.sendall(b'escaped')
        return "ok", 0.0, False, False, {}
