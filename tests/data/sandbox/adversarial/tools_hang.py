# expect: timeout
# phase: reset
# get_tools never returns.

class AdvEnv:
    def reset(self, seed=None):
        return "ready", {}

    def get_tools(self):
        while True:
            pass

    def execute_tool(self, name, arguments):
        return "ok"

    def step(self, action):
        return "ok", 0.0, True, False, {}
