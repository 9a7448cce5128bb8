# expect: timeout
# phase: step
import threading

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        threading.Thread(target=lambda: [0 for _ in iter(int, 1)], daemon=True).start()
        while True: pass
        return "ok", 0.0, False, False, {}
