# expect: invalid_result
# phase: reset
# Two tools of one name: which one a call means is undefined.

class AdvEnv:
    def reset(self, seed=None):
        return "ready", {}

    def get_tools(self):
        t = {"name": "lookup", "description": "d", "parameters": {"type": "object", "properties": {}}}
        return [t, dict(t)]

    def execute_tool(self, name, arguments):
        return "ok"

    def step(self, action):
        return "ok", 0.0, True, False, {}
