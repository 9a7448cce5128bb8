# expect: exception
# phase: reset
# landlock-off: ok

class AdvEnv:
    def reset(self, seed=None):
        self.data = open('/etc/passwd').read()
        return "ready", {}

    def step(self, action):
        pass
        return "ok", 0.0, False, False, {}
