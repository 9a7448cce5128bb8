#!/usr/bin/env python3
"""Slim rollouts tables into the seed plays spade ships (data/seed-plays.parquet).

usage: slim-plays.py ENVS.parquet OUT.parquet ROLLOUTS.parquet [ROLLOUTS.parquet ...]

Keeps what spade-regret reads and what the README's table needs: env_id, the environment's file
name (`source`, from the envs table), skill, arm, episode, return, success, status, turns,
temperature, policy_version. Rows of environments not in ENVS are dropped (an edited seed file
has another env_id: its old plays no longer apply). Prints the per-environment win rates.
"""
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq

KEEP = ["env_id", "arm", "episode", "return", "success", "status", "turns", "temperature", "policy_version"]


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: slim-plays.py ENVS.parquet OUT.parquet ROLLOUTS.parquet [...]")
    envs, out, plays = sys.argv[1], sys.argv[2], sys.argv[3:]
    meta = {r["env_id"]: r for r in pq.read_table(envs, columns=["env_id", "source", "skill"]).to_pylist()}
    rows = []
    for p in plays:
        for r in pq.read_table(p, columns=KEEP).to_pylist():
            if r["env_id"] in meta:
                r["source"], r["skill"] = meta[r["env_id"]]["source"], meta[r["env_id"]]["skill"]
                rows.append(r)
    rows.sort(key=lambda r: (r["source"], r["arm"], r["episode"]))
    t = pa.Table.from_pylist(rows)
    pq.write_table(t, out + ".tmp", compression="zstd")
    os.replace(out + ".tmp", out)
    print("%d plays of %d environments into %s" % (len(rows), len({r["env_id"] for r in rows}), out), file=sys.stderr)


if __name__ == "__main__":
    main()
