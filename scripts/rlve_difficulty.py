#!/usr/bin/env python3
"""RLVE's adaptive difficulty for the rlve arm of `make experiment` (issue #43).

Each RLVE environment of the arm's pool keeps a difficulty window [low, high] (RLVE's sliding
window): an episode's difficulty is drawn from the window (the adapter's rule: low + seed mod
(high - low + 1), the seed taken mod 2^31); the episodes played at `high` are counted, and once
`--tau-num` of them were played the window moves up by one when at least `--tau-acc` of them were
won (high + 1, low = max(low, high - window + 1)); the count starts again after every check, won or
not. The windows are recomputed from every earlier round's no-hint episodes of the run, in the
order they were played, so the state is never stored and a resumed run gets the same windows.

For round R this writes the names of the environments to play (`rlve:<Id>?difficulty=L..H`, one
a line; `--n` of them, or as many distinct environments as `--like`'s rollouts played, drawn
uniformly without replacement, seeded by `--seed` and R) and, with `--table`, every environment's
window as CSV (identifier, low, high, played_at_high, won_at_high, played, won).
"""
import argparse
import csv
import glob
import hashlib
import os
import re
import sys

NAME = re.compile(r"^rlve:([A-Za-z0-9_]+)(?:\?difficulty=(\d+)(?:\.\.(\d+))?)?$")


def parse(name):
    """(identifier, low, high) of an rlve name, or None for any other name."""
    m = NAME.match(name or "")
    if not m:
        return None
    low = int(m.group(2) or 0)
    high = int(m.group(3) if m.group(3) is not None else low)
    return m.group(1), low, high


def name(ident, low, high):
    if low == high == 0:
        return "rlve:%s" % ident
    if low == high:
        return "rlve:%s?difficulty=%d" % (ident, low)
    return "rlve:%s?difficulty=%d..%d" % (ident, low, high)


def difficulty(low, high, seed):
    return low + (int(seed) % (1 << 31)) % (high - low + 1)


class Window:
    def __init__(self):
        self.low = self.high = 0
        self.at_high = self.won_at_high = self.played = self.won = 0

    def record(self, d, won, tau_acc, tau_num, width, max_difficulty):
        self.played += 1
        self.won += int(won)
        if d != self.high:
            return
        self.at_high += 1
        self.won_at_high += int(won)
        if self.at_high >= tau_num:
            if self.won_at_high / self.at_high >= tau_acc and self.high < max_difficulty:
                self.high += 1
                self.low = max(self.low, self.high - width + 1)
            self.at_high = self.won_at_high = 0


def read_rows(path):
    import pyarrow.parquet as pq

    cols = ["round", "step", "episode", "arm", "skill", "seed", "success"]
    t = pq.read_table(path, columns=cols)
    return t.to_pylist()


def episodes(run, before_round):
    """The run's no-hint rlve episodes of rounds before `before_round`, in the order played."""
    rows = []
    for path in sorted(glob.glob(os.path.join(run, "round-*", "step-*", "rollouts.parquet"))):
        r = int(re.search(r"round-(\d+)", path).group(1))
        if r >= before_round:
            continue
        for row in read_rows(path):
            if row.get("arm") == "nohint" and parse(row.get("skill")):
                rows.append(row)
    rows.sort(key=lambda e: (e["round"], e["step"], e["episode"]))
    return rows


def windows(idents, eps, args):
    w = {i: Window() for i in idents}
    for e in eps:
        ident, low, high = parse(e["skill"])
        if ident in w:
            w[ident].record(difficulty(low, high, e["seed"]), bool(e["success"]), args.tau_acc, args.tau_num, args.window, args.max_difficulty)
    return w


def draw(idents, n, seed, rnd):
    """n identifiers, uniformly without replacement, by a hash of (identifier, seed, round)."""
    key = lambda i: hashlib.sha256(("%s/%d/%d" % (i, seed, rnd)).encode()).hexdigest()
    return sorted(sorted(idents, key=key)[:n])


def like_count(path):
    import pyarrow.parquet as pq

    return len(set(pq.read_table(path, columns=["env_id"]).column("env_id").to_pylist()))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--run", required=True, help="the arm's run folder (round-NNNN/step-S/rollouts.parquet)")
    p.add_argument("--round", type=int, required=True, help="the round about to be played")
    p.add_argument("--pool", required=True, help="a table (Parquet) whose `skill` column names the arm's rlve environments (its starting memory)")
    p.add_argument("--n", type=int, default=0, help="environments to play this round (all when 0)")
    p.add_argument("--like", default="", help="play as many environments as these rollouts played (the matched spade arm)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tau-acc", type=float, default=0.9, help="accuracy at `high` that moves the window up (RLVE: 0.9)")
    p.add_argument("--tau-num", type=int, default=8, help="episodes at `high` per check (the authors' runs: 128 at 4B-30B)")
    p.add_argument("--window", type=int, default=4, help="the window's largest width (RLVE: 4)")
    p.add_argument("--max-difficulty", type=int, default=20)
    p.add_argument("-o", "--out", required=True, help="the names to play, one a line")
    p.add_argument("--table", default="", help="every environment's window, CSV")
    args = p.parse_args(argv)
    if args.tau_num < 1 or args.window < 1 or not 0 < args.tau_acc <= 1:
        sys.exit("rlve_difficulty: --tau-num and --window must be at least 1 and --tau-acc in (0, 1]")

    import pyarrow.parquet as pq

    skills = pq.read_table(args.pool, columns=["skill"]).column("skill").to_pylist()
    idents = sorted({parse(s)[0] for s in skills if parse(s)})
    if not idents:
        sys.exit("%s: no rlve: environment in its `skill` column" % args.pool)
    w = windows(idents, episodes(args.run, args.round), args)
    n = like_count(args.like) if args.like else (args.n or len(idents))
    chosen = draw(idents, min(n, len(idents)), args.seed, args.round)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        f.writelines(name(i, w[i].low, w[i].high) + "\n" for i in chosen)
    os.replace(tmp, args.out)
    if args.table:
        with open(args.table + ".tmp", "w", newline="") as f:
            c = csv.writer(f)
            c.writerow(["identifier", "low", "high", "played_at_high", "won_at_high", "played", "won"])
            for i in idents:
                x = w[i]
                c.writerow([i, x.low, x.high, x.at_high, x.won_at_high, x.played, x.won])
        os.replace(args.table + ".tmp", args.table)
    highs = [w[i].high for i in idents]
    print(
        "rlve difficulty, round %d: %d of %d environments; window tops mean %.2f, max %d"
        % (args.round, len(chosen), len(idents), sum(highs) / len(highs), max(highs)),
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
