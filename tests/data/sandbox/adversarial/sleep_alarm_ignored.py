# expect: timeout
# phase: step
import signal, time

class AdvEnv:
    def reset(self, seed=None):
        pass
        return "ready", {}

    def step(self, action):
        signal.signal(signal.SIGALRM, signal.SIG_IGN); signal.alarm(1)
        while True:
            try:
                time.sleep(10)
            except BaseException:
                pass
        return "ok", 0.0, False, False, {}
