# RLVE's environment __ID__ as a spade environment (spade's rlve adapter, foreign: __NAME__).
# skill: __NAME__
# setting: games
#
# One question per episode, unchanged from the rlve-gym package: reset(seed) takes the difficulty
# d = __LOW__ + seed mod (__HIGH__ - __LOW__ + 1) (seed taken mod 2^31; one difficulty unless the
# name gave a window L..H), sets RLVE's own parameter controller to d (update() called d times, as
# RLVE's generate_problem does), picks one of its parameter settings with the seed, and calls the
# environment's generator(seed, parameter) and prompt_generator(). The one reply is scored by the
# environment's own verifier on <answer>...</answer>; a reply without those tags is read by the rg
# adapter's own reader (_answer below): its last \boxed{...}, else its last number when RLVE's
# reference answer is a number, else its last line, given to the verifier in the tags. Reward 1
# when RLVE counts it accurate (its reward at the passing threshold), else 0; RLVE's own reward in
# [-1, 1] is in info["rlve_reward"].
import json as _json
import random as _random
import re as _re
import sys as _sys
import types as _types

_ID = _json.loads(__ID_JSON__)
_ENV = _json.loads(__ENV_JSON__)
_CONTROLLER = _json.loads(__CONTROLLER_JSON__)
_LOW, _HIGH = __LOW__, __HIGH__
_INSTRUCTION = "Give your final answer inside \\boxed{}."


def _import(path):
    """`module.Class` of RLVE's, loading the module's file alone: importing it as a submodule would
    run its package's __init__, which imports all 400 environments (0.8 s and ~60 MB of an
    episode's own memory, against 0.15 s and a few MB)."""
    module, name = path.rsplit(".", 1)
    try:
        import torch  # noqa: F401  (RLVE's base module seeds torch too; no environment uses it)
    except ImportError:
        shim = _types.ModuleType("torch")
        shim.manual_seed = lambda seed: None
        shim.cuda = _types.SimpleNamespace(manual_seed_all=lambda seed: None)
        _sys.modules["torch"] = shim
    if module not in _sys.modules:
        import importlib.util
        import os

        root = os.path.dirname(importlib.util.find_spec("Gym").origin)
        spec = importlib.util.spec_from_file_location(module, os.path.join(root, *module.split(".")[1:]) + ".py")
        loaded = importlib.util.module_from_spec(spec)
        _sys.modules[module] = loaded
        spec.loader.exec_module(loaded)
    return getattr(_sys.modules[module], name)


__ANSWER_READER__


class RlveEnv:
    def reset(self, seed=None):
        seed = int(seed or 0) % (1 << 31)
        controller = _import(_CONTROLLER)()
        for _ in range(_LOW + seed % (_HIGH - _LOW + 1)):
            controller.update()
        parameter = _random.Random(seed).choice(controller.get_parameter_list())
        self._env = _import(_ENV)()
        if not self._env.generator(seed=seed, parameter=parameter):
            raise RuntimeError("RLVE's %s generator failed (seed %d, parameter %r)" % (_ID, seed, parameter))
        return self._env.prompt_generator() + "\n\n" + _INSTRUCTION, {}

    def step(self, action):
        reply = str(action)
        start, end = self._env.answer_markers
        if start not in reply:
            parameter = self._env.parameter or {}
            answer = _answer(reply, parameter.get("reference_answer", parameter.get("gold_answer")))
            if answer is not None:
                reply = reply + "\n" + start + answer + end
        verdict = self._env.verifier(reply)
        won = bool(verdict.get("accuracy"))
        reward = float(verdict.get("reward", -1.0))
        info = {"success": won, "rlve_reward": reward if reward == reward else -1.0}
        return ("Correct." if won else "Not correct."), (1.0 if won else 0.0), True, False, info
