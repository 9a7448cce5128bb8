#!/usr/bin/env python3
"""Live logs of a spade run for TensorBoard and Weights & Biases.

usage: loggers.py [RUNDIR] --loggers tensorboard,wandb [--project NAME] [--run-name NAME]
       loggers.py --check --loggers tensorboard,wandb

Without RUNDIR it is a metrics hook: the folder of $SPADE_METRICS_FILE (every stage runs
$SPADE_METRICS_HOOK after appending its metrics line; `make round LOGGERS=...` sets it to this script).
--check only checks that the loggers' packages are there (exit 2 naming the missing one).

Reads the lines of RUNDIR/metrics.jsonl that no earlier call has logged (each logger's position is
kept in RUNDIR/loggers-state.json; a logger added later catches up from the first line), so calling it after every stage (the Makefile does with LOGGERS=...)
logs each stage's numbers as soon as the stage ends. Every numeric field of a line becomes one
scalar `<stage>/<field.path>` (the `config` object aside); the step is the policy version the
numbers are about: the line's own `policy_version`, else the latest one logged before it. The
returns of a rollout (per arm) and the regret of a scoring call are also logged as histograms,
read from the tables the stage wrote (`config.output`).

- tensorboard: event files under RUNDIR/tb/ (tensorboardX; open with `tensorboard --logdir runs/`).
- wandb: one W&B run per spade run (its id derived from RUNDIR, resumed on every call), the run's
  config.json as its config; W&B's own step counts the logged lines (a resumed run refuses steps that
  do not grow) and every metric is plotted against `policy_version`. Online, or offline with
  WANDB_MODE=offline: each call then writes one folder RUNDIR/wandb/offline-run-*, all with the same
  run id: `wandb sync RUNDIR/wandb/offline-run-*` sends them as one run.

A logger that cannot start is an error naming it (exit 2); nothing in metrics.jsonl is changed.
"""
import argparse
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tables import table  # noqa: E402

LOGGERS = ("jsonl", "tensorboard", "wandb")


def fail(msg):
    print("error: " + msg, file=sys.stderr)
    sys.exit(2)


def flatten(prefix, v, out):
    if isinstance(v, bool):
        out[prefix] = float(v)
    elif isinstance(v, (int, float)):
        if v == v and v not in (float("inf"), float("-inf")):
            out[prefix] = float(v)
    elif isinstance(v, dict):
        for k, x in v.items():
            flatten(prefix + "/" + str(k) if prefix else str(k), x, out)
    elif isinstance(v, list):
        # Named items (spade-eval's summary: level, name): one group each.
        for x in v:
            if isinstance(x, dict) and isinstance(x.get("name"), str):
                key = "/".join(str(x[k]) for k in ("level", "name") if isinstance(x.get(k), str))
                flatten(prefix + "/" + key, {k: y for k, y in x.items() if k not in ("level", "name")}, out)


def scalars(line):
    out = {}
    stage = line.get("stage", "stage")
    for k, v in line.items():
        if k in ("config", "stage", "seed"):
            continue
        flatten(stage + "/" + k, v, out)
    return out


def column(path, name, where=None):
    """Values of a numeric column of a table the stage wrote (Parquet, JSONL or a shard folder), or []."""
    if not path or path == "-":
        return []
    rows = table(path, columns=[c for c in (name, where and where[0]) if c])
    return [r[name] for r in rows if isinstance(r.get(name), (int, float)) and (where is None or r.get(where[0]) == where[1])]


def histograms(line):
    stage, out = line.get("stage"), {}
    path = line.get("output") or (line.get("config") or {}).get("output")
    if stage == "spade-rollout":
        for arm in ("hint", "nohint"):
            xs = column(path, "return", ("arm", arm))
            if xs:
                out["spade-rollout/return_" + arm] = xs
    elif stage == "spade-regret":
        xs = column(path, "regret")
        if xs:
            out["spade-regret/regret"] = xs
    return out


class TensorBoard:
    def __init__(self, rundir, _args, offset):
        try:
            from tensorboardX import SummaryWriter
        except ImportError:
            fail("LOGGERS=tensorboard needs the tensorboardX package (make venv installs it)")
        # One event file per call, named apart: tensorboardX names them by the second, and two stages
        # can end within one (a same-named file would be written over).
        self.w = SummaryWriter(logdir=os.path.join(rundir, "tb"), filename_suffix=".%d.%d" % (os.getpid(), offset))

    def log(self, step, values, hists, _index):
        for k, v in values.items():
            self.w.add_scalar(k, v, global_step=step)
        for k, xs in hists.items():
            import numpy as np
            self.w.add_histogram(k, np.asarray(xs, dtype=float), global_step=step)

    def close(self):
        self.w.close()


class Wandb:
    def __init__(self, rundir, args):
        try:
            import wandb
        except ImportError:
            fail("LOGGERS=wandb needs the wandb package (make venv installs it)")
        self.wandb = wandb
        config = {}
        cfg = os.path.join(rundir, "config.json")
        if os.path.exists(cfg):
            config = json.load(open(cfg))
        rid = "spade-" + hashlib.sha256(os.path.abspath(rundir).encode()).hexdigest()[:12]
        name = args.run_name or config.get("run") or os.path.basename(os.path.abspath(rundir))
        try:
            self.run = wandb.init(project=args.project, id=rid, name=name, resume="allow", dir=rundir,
                                  config=config, reinit=True)
        except Exception as e:  # no login, no network: name it
            fail("LOGGERS=wandb: wandb.init failed (%s); log in, or set WANDB_MODE=offline" % e)
        self.run.define_metric("policy_version")
        self.run.define_metric("*", step_metric="policy_version")

    def log(self, step, values, hists, index):
        data = dict(values)
        data["policy_version"] = step
        for k, xs in hists.items():
            data[k] = self.wandb.Histogram(xs)
        self.run.log(data, step=index)

    def close(self):
        self.run.finish()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rundir", nargs="?")
    ap.add_argument("--check", action="store_true", help="only check that the loggers can start")
    ap.add_argument("--loggers", default="jsonl", help="comma-separated: jsonl, tensorboard, wandb")
    ap.add_argument("--project", default=os.environ.get("WANDB_PROJECT", "spade"))
    ap.add_argument("--run-name", default=None)
    args = ap.parse_args()
    names = [x.strip() for x in args.loggers.split(",") if x.strip()]
    for n in names:
        if n not in LOGGERS:
            fail("--loggers: unknown logger `%s` (%s)" % (n, ", ".join(LOGGERS)))
    sinks = [n for n in names if n != "jsonl"]  # jsonl: the stages write metrics.jsonl themselves
    if args.check:
        for n in sinks:
            try:
                __import__({"tensorboard": "tensorboardX", "wandb": "wandb"}[n])
            except ImportError:
                fail("LOGGERS=%s needs the %s package (make venv installs it)" % (n, {"tensorboard": "tensorboardX", "wandb": "wandb"}[n]))
        return
    if args.rundir:
        metrics = os.path.join(args.rundir, "metrics.jsonl")
    elif os.environ.get("SPADE_METRICS_FILE"):
        metrics = os.environ["SPADE_METRICS_FILE"]
        args.rundir = os.path.dirname(metrics) or "."
    else:
        fail("give RUNDIR, or run as a metrics hook (SPADE_METRICS_FILE set)")
    if not sinks or not os.path.exists(metrics):
        return
    # One logger call at a time per run (Slurm array shards append concurrently).
    import fcntl
    lock = open(os.path.join(args.rundir, "loggers.lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    state_path = os.path.join(args.rundir, "loggers-state.json")
    state = json.load(open(state_path)) if os.path.exists(state_path) else {}
    with open(metrics, "rb") as f:
        data = f.read()
    # Each logger keeps its own position: one added later catches up from the first line.
    for name in sinks:
        st = state.get(name, {})
        offset, step, index = st.get("offset", 0), st.get("step", 0), st.get("lines", 0)
        if offset > len(data):
            fail("%s is shorter than when %s last read it (%d bytes): remove %s to log it anew" % (metrics, name, offset, state_path))
        chunk = data[offset:]
        end = chunk.rfind(b"\n") + 1  # only whole lines
        lines = []
        at = offset
        for raw in chunk[:end].split(b"\n"):
            if raw.strip():
                try:
                    lines.append(json.loads(raw))
                except ValueError:
                    fail("%s: the line at byte %d is not JSON" % (metrics, at))
            at += len(raw) + 1
        if not lines:
            continue
        sink = TensorBoard(args.rundir, args, offset) if name == "tensorboard" else Wandb(args.rundir, args)
        for line in lines:
            pv = line.get("policy_version")
            if isinstance(pv, int):
                step = pv
            sink.log(step, scalars(line), histograms(line), index)
            index += 1
        sink.close()
        state[name] = {"offset": offset + end, "step": step, "lines": index}
        tmp = state_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(state, f)
        os.replace(tmp, state_path)

if __name__ == "__main__":
    main()
