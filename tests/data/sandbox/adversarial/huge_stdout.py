# expect: output_too_large
# phase: step

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        print('x' * 10**7, flush=True)
        return "ok", 0.0, False, False, {}
