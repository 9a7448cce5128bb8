# expect: invalid_result
# phase: reset
# A tool environment whose schemas would make the agent's first prompt millions of tokens.

class AdvEnv:
    def reset(self, seed=None):
        return "ready", {}

    def get_tools(self):
        return [{"name": "t%d" % i, "description": "x" * 100000, "parameters": {"type": "object", "properties": {}}} for i in range(200)]

    def execute_tool(self, name, arguments):
        return "ok"

    def step(self, action):
        return "ok", 0.0, True, False, {}
