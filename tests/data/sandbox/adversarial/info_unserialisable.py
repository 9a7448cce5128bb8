# expect: ok
# phase: -

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        return 'ok', 0.0, False, False, {'obj': object(), 'nan': float('nan'), 'set': {1}}
        return "ok", 0.0, False, False, {}
