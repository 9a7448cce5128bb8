# expect: invalid_result
# phase: reset
# A schema that contains itself (no JSON can say it): the reply must stay bounded and be refused.

class AdvEnv:
    def reset(self, seed=None):
        return "ready", {}

    def get_tools(self):
        params = {"type": "object", "properties": {}}
        params["properties"]["self"] = params
        return [{"name": "loop", "description": "d", "parameters": params}]

    def execute_tool(self, name, arguments):
        return "ok"

    def step(self, action):
        return "ok", 0.0, True, False, {}
