# expect: exception
# phase: syntax
class AdvEnv:
    def reset(self, seed=None)
        return "x", {}
