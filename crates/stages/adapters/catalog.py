# What an installed collection of environments holds, as JSON on stdout (run by a stage with the
# project's venv Python, outside the sandbox: only the package's own tables are read, no
# environment is made). `python catalog.py <collection>`:
#   rg         the Reasoning-Gym task names
#   rlve       {identifier: [environment class, parameter controller class]} as module.Class
#   gem        GEM's registered game: environments
#   textarena  {registered id: whether its module keeps a SinglePlayerState} (read from the
#              module's file, not imported: one of the package's modules does not parse)
import json
import os
import sys
import types

PACKAGES = {"rg": "reasoning-gym", "rlve": "rlve-gym", "gem": "gem-llm", "textarena": "textarena"}


def rg():
    import reasoning_gym

    return sorted(reasoning_gym.factory.DATASETS)


def rlve():
    try:
        import torch  # noqa: F401
    except ImportError:  # RLVE's base module imports torch only to seed it
        shim = types.ModuleType("torch")
        shim.manual_seed = lambda seed: None
        shim.cuda = types.SimpleNamespace(manual_seed_all=lambda seed: None)
        sys.modules["torch"] = shim
    from Gym.environments import identifier2environment as envs
    from Gym.parameter_controllers import identifier2controller as controllers

    path = lambda c: c.__module__ + "." + c.__name__
    return {k: [path(envs[k]), path(controllers[k])] for k in envs if k in controllers}


def gem():
    import gem  # noqa: F401  (registers its environments)
    from gem.envs.registration import ENV_REGISTRY

    return sorted(k for k in ENV_REGISTRY if k.startswith("game:"))


def textarena():
    import textarena
    from textarena.envs.registration import ENV_REGISTRY

    root = os.path.dirname(os.path.dirname(textarena.__file__))

    def single(module):
        path = os.path.join(root, *module.split("."))
        for f in (path + ".py", os.path.join(path, "__init__.py")):
            if os.path.exists(f):
                with open(f) as src:
                    return "SinglePlayerState" in src.read()
        return False

    seen = {}
    out = {}
    for k, spec in ENV_REGISTRY.items():
        m = spec.entry_point.split(":")[0] if isinstance(spec.entry_point, str) else spec.entry_point.__module__
        if m not in seen:
            seen[m] = single(m)
        out[k] = seen[m]
    return out


if __name__ == "__main__":
    collection = sys.argv[1]
    try:
        found = {"rg": rg, "rlve": rlve, "gem": gem, "textarena": textarena}[collection]()
    except ImportError as e:
        sys.exit("the package %s is not installed in this Python (make venv): %s" % (PACKAGES[collection], e))
    print(json.dumps(found))
