# expect: invalid_result
# phase: reset
# get_tools returns an endless generator instead of a list.

import itertools


class AdvEnv:
    def reset(self, seed=None):
        return "ready", {}

    def get_tools(self):
        return ({"name": "t%d" % i, "parameters": {}} for i in itertools.count())

    def execute_tool(self, name, arguments):
        return "ok"

    def step(self, action):
        return "ok", 0.0, True, False, {}
