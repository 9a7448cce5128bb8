# expect: ok
# action: {"name": "weird", "arguments": {"n": 1}}
# A tool result that is no string and whose __str__ and __repr__ raise: it becomes plain data.

class Weird:
    def __str__(self):
        raise RuntimeError("no")

    def __repr__(self):
        raise RuntimeError("no")


class AdvEnv:
    def reset(self, seed=None):
        return "ready", {}

    def get_tools(self):
        return [{"name": "weird", "description": "d", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}]

    def execute_tool(self, name, arguments):
        return {"value": Weird(), "self": [Weird()] * 3}

    def step(self, action):
        return "ok", 0.0, True, False, {}
