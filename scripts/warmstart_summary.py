#!/usr/bin/env python3
"""`make warmstart-check`: the share of valid, novel environments among the designer samples of the
base and the warm-started model on held-out documents (duplicates of the training pool are rejects),
printed as a table and written to <warm>/check.json."""
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


def main():
    warm = sys.argv[1]
    out = {k: share(os.path.join(warm, f"check-{k}")) for k in ("base", "warm")}
    print(f"{'model':<8} {'samples':>8} {'valid+novel':>12} {'share':>7}  rejects by stage")
    for k, v in out.items():
        print(f"{k:<8} {v['samples']:>8} {v['valid_novel']:>12} {v['share']:>7.1%}  {json.dumps(v['rejects_by_stage'])}")
    tmp = os.path.join(warm, "check.json.tmp")
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1)
    os.replace(tmp, os.path.join(warm, "check.json"))


if __name__ == "__main__":
    main()
