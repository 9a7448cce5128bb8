#!/usr/bin/env python3
"""`make warmstart-check`: the share of valid, novel environments among the designer samples of the
base and the warm-started model on held-out documents (duplicates of the training pool are rejects),
and both models' evaluation suites, printed as tables and written to <warm>/check.json."""
import json
import os
import sys

import pyarrow.parquet as pq


def share(d):
    envs = pq.read_metadata(os.path.join(d, "envs.parquet")).num_rows
    rej = pq.read_table(os.path.join(d, "rejects.parquet")).to_pylist()
    stages = {}
    for r in rej:
        stages[r["stage"]] = stages.get(r["stage"], 0) + 1
    n = envs + len(rej)
    return {"samples": n, "valid_novel": envs, "share": envs / n if n else 0.0, "rejects_by_stage": stages}


def evals(d):
    """Per suite: items, mean score, and two signs of skill finer than the score on a small model —
    replies that use the `<answer>` tags the suites ask for, and replies that contain the reference
    answer anywhere."""
    path = os.path.join(d, "eval.parquet")
    if not os.path.exists(path):
        return None
    suites = {}
    for r in pq.read_table(path).to_pylist():
        s = suites.setdefault(r["suite"], {"items": 0, "score": 0.0, "answer_tags": 0, "answer_anywhere": 0})
        s["items"] += 1
        s["score"] += r["score"]
        s["answer_tags"] += int("<answer>" in r["response"])
        ans = (r["answer"] or "").strip().lower()
        s["answer_anywhere"] += int(bool(ans) and ans in r["response"].lower())
    for s in suites.values():
        s["score"] /= max(s["items"], 1)
    return suites


def main():
    warm = sys.argv[1]
    out = {k: share(os.path.join(warm, f"check-{k}")) for k in ("base", "warm")}
    print(f"{'model':<8} {'samples':>8} {'valid+novel':>12} {'share':>7}  rejects by stage")
    for k, v in out.items():
        print(f"{k:<8} {v['samples']:>8} {v['valid_novel']:>12} {v['share']:>7.1%}  {json.dumps(v['rejects_by_stage'])}")
    for k in out:
        out[k]["eval"] = evals(os.path.join(warm, f"check-{k}"))
    if all(out[k]["eval"] is not None for k in out):
        print(f"\n{'model':<8} {'suite':<16} {'items':>6} {'score':>7} {'<answer>':>9} {'answer anywhere':>16}")
        for k in out:
            for name, s in sorted(out[k]["eval"].items()):
                print(f"{k:<8} {name:<16} {s['items']:>6} {s['score']:>7.3f} {s['answer_tags']:>9} {s['answer_anywhere']:>16}")
    tmp = os.path.join(warm, "check.json.tmp")
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1)
    os.replace(tmp, os.path.join(warm, "check.json"))


if __name__ == "__main__":
    main()
