#!/usr/bin/env python3
"""`make soak`: run a long command (a multi-round experiment) and watch what it leaves behind.

usage: soak.py --out DIR --run RUNDIR --arms N [--interval S] -- COMMAND...
       soak.py --recheck DIR   (the checks again on DIR/soak.csv, e.g. after changing an allowance)

Starts COMMAND in a session of its own and samples every --interval seconds, from /proc:
processes of the run's tree (its session and their descendants), open descriptors of each spade
process, resident memory per program (peak) and sandbox workers; at each round's end, the bytes
under RUNDIR, the temp folder ($TMPDIR, else /tmp; RUNDIR and DIR left out), /dev/shm and the
sandbox scratch folders (spade-sandbox-* in the temp folder). A round ends when all N arms under RUNDIR have
its memory.parquet. Per round it writes a row of DIR/soak.csv (peaks over the round, the state at its
end), and at the end a row `end` (after COMMAND exited: what is left), DIR/soak.json (the checks) and
DIR/soak.png. Exit status: COMMAND's when it failed, else 1 when a check fails, else 0.

Checks (round 1 warms caches and is the baseline's exception; each later round is compared with
the first steady round of its kind: rounds with an evaluation with the first such round after
round 1, the others with the first without one):
- nothing of the run's tree is left once COMMAND exited, and no sandbox worker started during
  the run is left anywhere with init as its parent;
- /tmp, /dev/shm and the sandbox scratch are back within 1 MiB of where they were before it started;
- per round, the peak open descriptors of a spade process and the peak sandbox workers grow by at
  most 25% + 8 over the reference's, the peak processes of the tree by at most 25% + 16, the peak resident
  memory of each program by at most 25% + 16 MiB, and /tmp, /dev/shm and scratch at a round's end by at most
  1 MiB over the reference round's end. RUNDIR grows by design (checkpoints, tables): reported, not checked.
"""
import argparse
import csv
import glob
import json
import os
import signal
import subprocess
import sys
import time

MIB = 1 << 20
# A program's memory may grow 25% plus this much (KiB) over the reference round's peak. The peak is
# what a half-second sampler saw, and a program that lives well under a second (spade-regret, ~17 MiB)
# is caught at any point of its start-up: 12.7 MiB in one round, 17.9 in another (soak 2026-12-06).
RSS_ADD_KIB = 16 * 1024


def du(path, skip=()):
    """Bytes of the blocks of the files under `path`, the folders in `skip` left out."""
    skip = {os.path.realpath(p) for p in skip}
    total = 0
    for root, dirs, files in os.walk(path, onerror=lambda e: None):
        dirs[:] = [d for d in dirs if os.path.realpath(os.path.join(root, d)) not in skip]
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_blocks * 512
            except OSError:
                pass
    return total


TMP = os.environ.get("TMPDIR") or "/tmp"


def scratch_bytes():
    return sum(du(p) for p in glob.glob(os.path.join(TMP, "spade-sandbox-*")))


def disk(rundir, out):
    """Bytes under the run, the temp folder ($TMPDIR, else /tmp; the run and the report left out
    when they are in it), /dev/shm and the sandbox scratch folders."""
    return {"runs_bytes": du(rundir) if os.path.isdir(rundir) else 0, "tmp_bytes": du(TMP, (rundir, out)),
            "shm_bytes": du("/dev/shm"), "scratch_bytes": scratch_bytes()}


def stats():
    """{pid: (ppid, session, comm, start time in clock ticks since boot)} of every process."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                stat = f.read()
            rest = stat.rsplit(")", 1)[1].split()
            out[int(name)] = (int(rest[1]), int(rest[3]), stat[stat.index("(") + 1:stat.rindex(")")], int(rest[19]))
        except (OSError, ValueError, IndexError):
            continue
    return out


def processes(sid):
    """(pid, comm, fds, rss_kib) of every process of the run: session `sid` and all descendants of
    its members (the sandbox's episodes call setsid, so they are in sessions of their own)."""
    info = stats()
    tree = {pid for pid, st in info.items() if st[1] == sid}
    grew = True
    while grew:
        more = {pid for pid, st in info.items() if st[0] in tree and pid not in tree}
        tree |= more
        grew = bool(more)
    out = []
    for pid in sorted(tree):
        comm = info[pid][2]
        try:
            rss = 0
            with open("/proc/%d/status" % pid) as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss = int(line.split()[1])
            fds = len(os.listdir("/proc/%d/fd" % pid)) if comm.startswith("spade") else 0
            out.append((pid, comm, fds, rss))
        except (OSError, ValueError):
            continue
    return out


def orphan_workers(since_ticks):
    """Sandbox workers of any session that were started after `since_ticks` (clock ticks since
    boot) and now have init as parent: what an escaped or abandoned one looks like."""
    return sum(1 for ppid, _, comm, start in stats().values() if comm.startswith("spade-sandbox") and ppid == 1 and start >= since_ticks)


def boot_ticks():
    with open("/proc/uptime") as f:
        return int(float(f.read().split()[0]) * os.sysconf("SC_CLK_TCK"))


def rounds_done(rundir, arms):
    """The number of rounds every arm has finished (memory.parquet written)."""
    per_arm = {}
    for p in glob.glob(os.path.join(rundir, "*", "round-*", "memory.parquet")):
        arm = p.split(os.sep)[-3]
        per_arm[arm] = per_arm.get(arm, 0) + 1
    if len(per_arm) < arms:
        return 0
    return min(per_arm.values())


class Round:
    def __init__(self):
        self.start = time.time()
        self.procs_peak = 0
        self.fds_peak = 0
        self.workers_peak = 0
        self.rss_peak = {}

    def sample(self, procs):
        self.procs_peak = max(self.procs_peak, len(procs))
        self.fds_peak = max([self.fds_peak] + [p[2] for p in procs])
        self.workers_peak = max(self.workers_peak, sum(1 for p in procs if p[1].startswith("spade-sandbox")))
        for _, comm, _, rss in procs:
            if comm.startswith("spade"):
                self.rss_peak[comm] = max(self.rss_peak.get(comm, 0), rss)

    def row(self, name, procs, d):
        r = {"round": name, "seconds": round(time.time() - self.start, 1), "procs_peak": self.procs_peak,
             "procs_end": len(procs), "fds_peak": self.fds_peak, "workers_peak": self.workers_peak,
             "workers_end": sum(1 for p in procs if p[1].startswith("spade-sandbox"))}
        r.update(d)
        r.update({"rss_peak_kib." + k: v for k, v in sorted(self.rss_peak.items())})
        return r


def kind(row):
    """A round with an evaluation (its processes, workers and memory are the eval's) or without."""
    return "eval" if row.get("rss_peak_kib.spade-eval") else "plain"


def checks(rows, base):
    """The failed checks, one line each (see the module's docstring)."""
    bad = []
    end = rows[-1]
    if end["round"] == "end":
        if end["procs_end"]:
            bad.append("%d processes of the run left after it exited" % end["procs_end"])
        if end["workers_orphaned"]:
            bad.append("%d sandbox workers started by the run are left with init as parent" % end["workers_orphaned"])
        for k in ("tmp_bytes", "shm_bytes", "scratch_bytes"):
            if end[k] > base[k] + MIB:
                bad.append("%s: %d bytes left over the %d before the run" % (k, end[k], base[k]))
    refs = {}
    for r in rows:
        if r["round"] in ("end", 1):
            continue
        ref = refs.setdefault(kind(r), r)
        if ref is r:
            continue
        for k, frac, add in (("fds_peak", 0.25, 8), ("workers_peak", 0.25, 8), ("procs_peak", 0.25, 16)):
            if r[k] > ref[k] * (1 + frac) + add:
                bad.append("round %s: %s %d over round %s's %d" % (r["round"], k, r[k], ref["round"], ref[k]))
        for k in ("tmp_bytes", "shm_bytes", "scratch_bytes"):
            if r[k] > ref[k] + MIB:
                bad.append("round %s: %s %d over round %s's %d at its end" % (r["round"], k, r[k], ref["round"], ref[k]))
        for k, v in r.items():
            if k.startswith("rss_peak_kib.") and ref.get(k) and v and v > ref[k] * 1.25 + RSS_ADD_KIB:
                bad.append("round %s: %s %d over round %s's %d" % (r["round"], k, v, ref["round"], ref[k]))
    return bad


def figure(path, rows):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rs = [r for r in rows if r["round"] != "end"]
    if not rs:
        return
    x = [r["round"] for r in rs]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.4))
    for k in ("procs_peak", "fds_peak", "workers_peak"):
        axes[0].plot(x, [r[k] for r in rs], marker="o", label=k)
    axes[0].set_title("processes, descriptors, workers (peak)")
    for k in sorted({k for r in rs for k in r if k.startswith("rss_peak_kib.")}):
        axes[1].plot(x, [r.get(k, 0) / 1024 for r in rs], marker="o", label=k.split(".", 1)[1])
    axes[1].set_title("peak resident memory per program, MiB")
    for k in ("tmp_bytes", "shm_bytes", "scratch_bytes"):
        axes[2].plot(x, [r[k] / MIB for r in rs], marker="o", label=k)
    axes[2].set_title("bytes at the round's end, MiB")
    for a in axes:
        a.set_xlabel("round")
        a.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def report(out, rows, summary):
    """Runs the checks on `rows`, writes DIR/soak.json (`summary` with them) and DIR/soak.png,
    says each failed check on stderr; returns them."""
    bad = checks(rows, summary["baseline"])
    summary["failed_checks"] = bad
    with open(os.path.join(out, "soak.json"), "w") as f:
        json.dump(summary, f, indent=1)
    figure(os.path.join(out, "soak.png"), rows)
    for b in bad:
        print("soak: check failed: " + b, file=sys.stderr)
    return bad


def recheck(out):
    """Runs the checks again on a finished soak's table; rewrites soak.json and soak.png."""
    with open(os.path.join(out, "soak.csv")) as f:
        rows = []
        for r in csv.DictReader(f):
            row = {k: (v if k == "round" else (float(v) if "." in v else int(v)) if v not in ("", None) else 0) for k, v in r.items()}
            row["round"] = int(r["round"]) if r["round"].isdigit() else r["round"]
            rows.append(row)
    with open(os.path.join(out, "soak.json")) as f:
        summary = json.load(f)
    sys.exit(1 if report(out, rows, summary) else 0)


def main():
    if sys.argv[1:2] == ["--recheck"] and len(sys.argv) == 3:
        recheck(sys.argv[2])
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--run", required=True, help="the experiment's folder (runs/<EXP>)")
    ap.add_argument("--arms", type=int, required=True)
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        sys.exit("error: soak.py: no command after --")
    os.makedirs(a.out, exist_ok=True)
    base = disk(a.run, a.out)
    since = boot_ticks()
    # A SIGTERM (a time limit, a scheduler) ends the run like Ctrl-C: the table of what was
    # measured is still written.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    child = subprocess.Popen(cmd, start_new_session=True)
    sid = child.pid
    rows, cur, done = [], Round(), 0
    try:
        while child.poll() is None:
            procs = processes(sid)
            cur.sample(procs)
            n = rounds_done(a.run, a.arms)
            if n > done:
                d = disk(a.run, a.out)
                for r in range(done + 1, n + 1):
                    rows.append(cur.row(r, procs, d))
                    print("soak: round %d: %s" % (r, json.dumps(rows[-1])), file=sys.stderr)
                    cur = Round()
                done = n
            time.sleep(a.interval)
    except KeyboardInterrupt:
        os.killpg(sid, signal.SIGTERM)
        child.wait()
    time.sleep(1.0)
    left = processes(sid)
    rows.append(cur.row("end", left, disk(a.run, a.out)))
    rows[-1]["workers_orphaned"] = orphan_workers(since)
    cols = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    with open(os.path.join(a.out, "soak.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)
    bad = report(a.out, rows, {"command": cmd, "exit": child.returncode, "rounds": done, "baseline": base})
    print(os.path.join(a.out, "soak.csv"))
    if child.returncode:
        sys.exit(child.returncode)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
