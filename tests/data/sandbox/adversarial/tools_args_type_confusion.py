# expect: ok
# action: {"name": "add", "arguments": "[1, 2, {\"__class__\": 3}]"}
# Arguments that are no object (a string holding a JSON list): the tool gets an empty dict.

class AdvEnv:
    def reset(self, seed=None):
        return "ready", {}

    def get_tools(self):
        return [{"name": "add", "description": "d", "parameters": {"type": "object", "properties": {}}}]

    def execute_tool(self, name, arguments):
        assert isinstance(arguments, dict) and not arguments, arguments
        return "empty"

    def step(self, action):
        return "ok", 0.0, True, False, {}
