"""Score model responses with each suite's own verifier. Runs INSIDE the sandbox (spade_sandbox
`run_function`): responses are untrusted (Reasoning-Gym scorers may eval() them, HumanEval
executes them), so this module never runs in the stage process.

Entry points (called with JSON arguments, return JSON):
    score_batch(site_paths, items) -> [{"score", "status", "extracted"}]
where each item is {"suite", "task", "response", "answer", "meta"}, and, for BFCL multi-turn
episodes (the model's calls are eval()ed against the package's function backends):
    bfcl_step(site_paths, meta, executed, reply) -> {"calls", "results", "error"}
"""

import json
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


def _rg_dataset(task, seed, size, config=None):
    key = (task, seed, size, json.dumps(config, sort_keys=True))
    if key not in _RG_CACHE:
        import reasoning_gym
        _RG_CACHE[key] = reasoning_gym.create_dataset(task, seed=seed, size=size, **(config or {}))
    return _RG_CACHE[key]


def _lenient_answer(response, gold):
    """rg:easy without <answer> tags: the last \\boxed{} content, else the last number when the
    gold answer is a number, else the last non-empty line without its closing punctuation."""
    boxed = re.findall(r"\\boxed\{([^{}]*)\}", response)
    if boxed:
        return boxed[-1].strip()
    if gold is not None and re.fullmatch(r"-?\d+(\.\d+)?", str(gold).strip()):
        nums = re.findall(r"-?\d+(?:\.\d+)?", response)
        return nums[-1] if nums else None
    lines = [l.strip() for l in response.strip().splitlines() if l.strip()]
    return lines[-1].rstrip(".!") if lines else None


def score_rg(item):
    from reasoning_gym.utils import extract_answer
    m = item["meta"]
    ds = _rg_dataset(m["task"], int(m["seed"]), int(m["size"]), m.get("config"))
    entry = ds[int(m["index"])]
    extracted = extract_answer(item["response"] or "")
    if extracted is None and m.get("lenient"):
        extracted = _lenient_answer(item["response"] or "", item.get("answer"))
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


def _bfcl_decode(reply):
    """The calls of one model reply as BFCL decodes them: a list of call strings, [] when the
    reply holds no call, None (with the error) when it cannot be decoded."""
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import is_empty_execute_response
    from bfcl_eval.model_handler.utils import default_decode_execute_prompting
    try:
        calls = default_decode_execute_prompting(reply or "", has_tool_call_tag=False)
    except Exception as e:
        return None, "%s: %s" % (type(e).__name__, str(e)[:200])
    if is_empty_execute_response(calls):
        return [], None
    return [str(c) for c in calls], None


def _bfcl_instances_name():
    # The package caches backend instances in module globals by model name and item id: a fresh
    # name per call keeps every episode on its own state even if a process were reused.
    import uuid
    return "spade_" + uuid.uuid4().hex


def bfcl_step(site_paths, meta, executed, reply):
    """One step of a BFCL multi-turn episode: decode `reply`; when it holds calls, rebuild the
    backends' state by replaying the calls `executed` so far (a list of steps, each a list of call
    strings; the backends are deterministic, their randomness seeded), then execute the new calls
    and return their results."""
    _setup(site_paths)
    calls, error = _bfcl_decode(reply)
    if not calls:
        return {"calls": calls, "results": [], "error": error}
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call
    name = _bfcl_instances_name()
    long_context = "long_context" in meta["category"]
    run = lambda cs: execute_multi_turn_func_call(cs, meta["initial_config"], meta["involved_classes"], name,
                                                  meta["id"], long_context=long_context, is_evaL_run=False)[0]
    for step in executed:
        run(step)
    return {"calls": calls, "results": [str(r) for r in run(calls)], "error": None}


def score_bfcl(item):
    """BFCL's multi-turn checker on an episode transcript: a JSON list of turns, each a list of
    steps {"reply", "calls"?}; a step's calls are decoded from its reply unless given. Fewer turns
    than the ground truth (the episode was cut short) fail, as in BFCL."""
    import json
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker
    m = item["meta"]
    truth = json.loads(item["answer"])
    try:
        turns = json.loads(item["response"] or "[]")
    except ValueError:
        return {"score": 0.0, "status": "ok", "extracted": "transcript is not JSON"}
    if not isinstance(turns, list) or len(turns) != len(truth):
        n = len(turns) if isinstance(turns, list) else 0
        return {"score": 0.0, "status": "ok", "extracted": "cut short: %d of %d turns" % (n, len(truth))}
    decoded = []
    for turn in turns:
        steps = []
        for step in turn if isinstance(turn, list) else []:
            step = step if isinstance(step, dict) else {"reply": str(step)}
            calls = step.get("calls")
            if not isinstance(calls, list):
                calls, _ = _bfcl_decode(step.get("reply"))
            if calls:
                steps.append([str(c) for c in calls])
        decoded.append(steps)
    entry = {"id": m["id"], "initial_config": m["initial_config"], "involved_classes": m["involved_classes"]}
    verdict = multi_turn_checker(decoded, truth, entry, m["category"], _bfcl_instances_name())
    if verdict.get("valid"):
        return {"score": 1.0, "status": "ok", "extracted": None}
    why = verdict.get("error_type") or verdict.get("error_message") or "invalid"
    return {"score": 0.0, "status": "ok", "extracted": str(why)}


def score_one(item):
    suite = item["suite"]
    if suite.startswith("rg:"):
        return score_rg(item)
    if suite in ("math500", "aime24", "aime25"):
        return score_math(item)
    if suite == "humaneval":
        return score_humaneval(item)
    if suite == "bfcl-mt":
        return score_bfcl(item)
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
