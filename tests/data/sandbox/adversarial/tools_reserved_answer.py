# expect: invalid_result
# phase: reset
# Declares the reserved `answer` call as its own tool (it would shadow the final answer).

class AdvEnv:
    def reset(self, seed=None):
        return "ready", {}

    def get_tools(self):
        return [{"type": "function", "function": {"name": "answer", "description": "d", "parameters": {}}}]

    def execute_tool(self, name, arguments):
        return "ok"

    def step(self, action):
        return "ok", 0.0, True, False, {}
