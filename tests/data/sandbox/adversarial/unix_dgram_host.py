# expect: exception
# phase: step
# A datagram to a named Unix socket of the host without connect() (sendto with an address),
# through a socket made by socketpair().
import socket

class AdvEnv:
    def reset(self, seed=None):
        return "ready", {}

    def step(self, action):
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        a.sendto(b'escaped', '{{UNIX_DGRAM}}')
        return "ok", 0.0, False, False, {}
