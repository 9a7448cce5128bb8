# expect: exception
# phase: step
import threading, time

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        while True: threading.Thread(target=time.sleep, args=(100,), daemon=True).start()
        return "ok", 0.0, False, False, {}
