# expect: invalid_result
# phase: step
# A NaN reward dressed as a float subclass whose __float__ says 1.0.
class Sly(float):
    def __float__(self):
        return 1.0

class AdvEnv:
    def reset(self, seed=None):
        return "ready", {}

    def step(self, action):
        return "ok", Sly("nan"), True, False, {}
