# expect: invalid_result
# phase: step
# action: {"name": "answer", "arguments": {"answer": "1"}}
# The final answer reaches a step() that returns the wrong shape.

class AdvEnv:
    def reset(self, seed=None):
        return "ready", {}

    def get_tools(self):
        return [{"name": "noop", "description": "d", "parameters": {"type": "object", "properties": {}}}]

    def execute_tool(self, name, arguments):
        return "ok"

    def step(self, action):
        return {"reward": 1.0}
