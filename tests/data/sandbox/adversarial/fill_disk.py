# expect: exception
# phase: step

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        f = open('big.bin', 'wb')
        while True: f.write(b'x' * (1 << 20)); f.flush()
        return "ok", 0.0, False, False, {}
