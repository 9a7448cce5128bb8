# expect: memory
# phase: step

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        x = []
        while True: x.append(bytearray(10**7))
        return "ok", 0.0, False, False, {}
