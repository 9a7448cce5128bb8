# expect: invalid_result
# phase: reset
# (it breaks its own episode server; the point is that the next jobs are unaffected)
import builtins, json, random, sys, math

class AdvEnv:
    def reset(self, seed=None):
        builtins.len = lambda x: 0
        json.dumps = lambda *a, **k: 'garbage'
        random.random = lambda: 0.5
        math.pi = 3
        sys.modules['re'] = None
        return "ready", {}

    def step(self, action):
        
        return "ok", 0.0, False, False, {}
