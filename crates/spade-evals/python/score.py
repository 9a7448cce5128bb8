"""Score model responses with each suite's own verifier. Runs INSIDE the sandbox (spade_sandbox
`run_function`): responses are untrusted (Reasoning-Gym scorers may eval() them, HumanEval
executes them), so this module never runs in the stage process.

Entry points (called with JSON arguments, return JSON):
    score_batch(site_paths, items) -> [{"score", "status", "extracted"}]
where each item is {"suite", "task", "response", "answer", "meta"}.
"""

import math
import re
import sys
import warnings

warnings.filterwarnings("ignore")

_RG_CACHE = {}


def _setup(site_paths):
    for p in reversed(site_paths or []):
        if p not in sys.path:
            sys.path.insert(0, p)


def _clip(x):
    try:
        x = float(x)
    except (TypeError, ValueError):
        return 0.0
    if not math.isfinite(x):
        return 0.0
    return min(1.0, max(0.0, x))


def _rg_dataset(task, seed, size):
    key = (task, seed, size)
    if key not in _RG_CACHE:
        import reasoning_gym
        _RG_CACHE[key] = reasoning_gym.create_dataset(task, seed=seed, size=size)
    return _RG_CACHE[key]


def score_rg(item):
    from reasoning_gym.utils import extract_answer
    m = item["meta"]
    ds = _rg_dataset(m["task"], int(m["seed"]), int(m["size"]))
    entry = ds[int(m["index"])]
    extracted = extract_answer(item["response"] or "")
    if extracted is None:  # no <answer> tags: nothing to score (some scorers give None format credit)
        return {"score": 0.0, "status": "ok", "extracted": None}
    return {"score": _clip(ds.score_answer(extracted, entry)), "status": "ok", "extracted": extracted}


def score_math(item):
    from math_verify import parse, verify
    gold = parse("\\boxed{" + item["answer"] + "}", parsing_timeout=None)
    pred = parse(item["response"] or "", parsing_timeout=None)
    ok = bool(pred) and verify(gold, pred, timeout_seconds=None)
    extracted = str(pred[-1]) if pred else None
    return {"score": 1.0 if ok else 0.0, "status": "ok", "extracted": extracted}


_FENCE = re.compile(r"```[ \t]*(?:python|py|Python)?[ \t]*\n(.*?)```", re.DOTALL)


def humaneval_program(prompt, response, test, entry_point):
    """The program HumanEval runs: the model's function (a full definition from its last code
    block, with the prompt's imports) or, when it wrote only a body, prompt + completion."""
    blocks = _FENCE.findall(response or "")
    code = blocks[-1] if blocks else (response or "")
    if re.search(r"^\s*def\s+%s\s*\(" % re.escape(entry_point), code, re.MULTILINE):
        header = "".join(l + "\n" for l in prompt.splitlines()
                         if l.startswith("import ") or l.startswith("from "))
        program = header + "\n" + code
    else:
        program = prompt + code
    return program + "\n\n" + test + "\n\ncheck(%s)\n" % entry_point


def score_humaneval(item):
    m = item["meta"]
    program = humaneval_program(m["prompt"], item["response"], m["test"], m["entry_point"])
    scope = {"__name__": "__humaneval__"}
    try:
        exec(compile(program, "<humaneval>", "exec"), scope)
    except BaseException as e:  # a failed test (AssertionError) or broken code: not passed
        return {"score": 0.0, "status": "ok", "extracted": "%s: %s" % (type(e).__name__, str(e)[:200])}
    return {"score": 1.0, "status": "ok", "extracted": None}


def score_one(item):
    suite = item["suite"]
    if suite.startswith("rg:"):
        return score_rg(item)
    if suite in ("math500", "aime24", "aime25"):
        return score_math(item)
    if suite == "humaneval":
        return score_humaneval(item)
    return {"score": 0.0, "status": "unknown suite %s" % suite, "extracted": None}


def score_batch(site_paths, items):
    _setup(site_paths)
    out = []
    for item in items:
        try:
            r = score_one(item)
        except Exception as e:
            r = {"score": 0.0, "status": "scorer_error: %s: %s" % (type(e).__name__, str(e)[:300]),
                 "extracted": None}
        if r.get("extracted") is not None:
            r["extracted"] = str(r["extracted"])[:500]
        out.append(r)
    return out
