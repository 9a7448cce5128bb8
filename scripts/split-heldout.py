#!/usr/bin/env python3
"""The held-out seed environments: a seeded, stratified share of the seed pool, moved once from
data/seed-envs/ to data/heldout-envs/ and committed, so no warm-up and no run's memory (both read
data/seed-envs/) ever sees them, and `spade-eval --suite envs:data/heldout-envs` plays them.

usage: split-heldout.py [--share 0.1] [--seed heldout-v1] [--dry-run]

Strata: (skill, easy level or not; easy_* files are the easy level). In each stratum
max(1, round(share × size)) files are held out: those already in data/heldout-envs/ stay, and
the rest are taken in order of sha256(seed + ":" + file name). Running it again moves nothing;
after new seed files are added, it moves only what keeps each stratum's share.
"""
import argparse
import hashlib
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def skill(path):
    with open(path) as f:
        for line in f:
            m = re.match(r"#\s*skill:\s*(.+)", line)
            if m:
                return m.group(1).strip()
            if not line.startswith("#"):
                break
    return "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--share", type=float, default=0.1)
    ap.add_argument("--seed", default="heldout-v1")
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args()
    src, dst = os.path.join(ROOT, "data/seed-envs"), os.path.join(ROOT, "data/heldout-envs")
    files = [(d, f) for d in (src, dst) if os.path.isdir(d) for f in sorted(os.listdir(d)) if f.endswith(".py")]
    strata = {}
    for d, f in files:
        strata.setdefault((skill(os.path.join(d, f)), f.startswith("easy_")), []).append((d, f))
    os.makedirs(dst, exist_ok=True)
    for key, members in sorted(strata.items()):
        k = max(1, round(a.share * len(members)))
        held = sum(1 for d, _ in members if d == dst)
        members.sort(key=lambda m: hashlib.sha256((a.seed + ":" + m[1]).encode()).hexdigest())
        for d, f in [m for m in members if m[0] == src][:max(0, k - held)]:
            print("hold out %s (%s%s)" % (f, key[0], ", easy" if key[1] else ""))
            if not a.dry_run:
                os.rename(os.path.join(src, f), os.path.join(dst, f))


if __name__ == "__main__":
    main()
