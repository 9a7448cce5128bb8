# expect: exception
# phase: reset

class AdvEnv:
    def reset(self, seed=None):
        open('../spade-sandbox-canary-parent', 'w').write('x')
        return "ready", {}

    def step(self, action):
        pass
        return "ok", 0.0, False, False, {}
