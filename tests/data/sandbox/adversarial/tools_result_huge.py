# expect: output_too_large
# phase: step
# action: {"name": "dump", "arguments": {}}
# A tool whose result is 8 MiB.

class AdvEnv:
    def reset(self, seed=None):
        return "ready", {}

    def get_tools(self):
        return [{"name": "dump", "description": "d", "parameters": {"type": "object", "properties": {}}}]

    def execute_tool(self, name, arguments):
        return "x" * (8 << 20)

    def step(self, action):
        return "ok", 0.0, True, False, {}
