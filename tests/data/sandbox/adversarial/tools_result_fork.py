# expect: exception
# phase: step
# action: {"name": "spawn", "arguments": {}}
# A tool that forks a child to outlive the episode.

import os


class AdvEnv:
    def reset(self, seed=None):
        return "ready", {}

    def get_tools(self):
        return [{"name": "spawn", "description": "d", "parameters": {"type": "object", "properties": {}}}]

    def execute_tool(self, name, arguments):
        pid = os.fork()
        if pid == 0:
            import time
            time.sleep(60)
            os._exit(0)
        return "forked %d" % pid

    def step(self, action):
        return "ok", 0.0, True, False, {}
