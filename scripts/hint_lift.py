#!/usr/bin/env python3
"""The hint lift of `make hint-lift`, from its files alone.

    hint_lift.py RUN    RUN/lift.csv and RUN/lift.json from RUN/envs.parquet and RUN/rollouts.parquet
    hint_lift.py --swap HINTS OUT FILE...
                        copies of the environment files FILE (or a folder's *.py) in folder OUT, each with its `# hint:` line
                        replaced by the hint HINTS gives its file name (a tab-separated file: name, hint;
                        `#` lines are comments), to measure other hints on the same environments

A row of lift.csv is one environment: its no-hint and hint win rates (mean `return`, the quantity
regret compares, each with its standard error), their difference (the lift, hint − no-hint, the
environment's regret; its standard error from the two arms' — the arms' episodes are independent
draws), the success rates of both arms, and the share of each arm's episodes that did not end ok
(status: truncated, error, ...), and each arm's echo: the share of its first replies that name one of the
hint's own numbers or `\\boxed{...}` answers that the first observation does not show (empty when the hint
has none; the no-hint arm's share is the chance rate; a hint arm far above it copies the hint instead of
solving its own instance). lift.json: the mean lift over the environments the agent ever wins (a success in
either arm), with its standard error over those environments, the share of them with a lift above 0,
the same over all environments, each arm's mean, and each arm's mean echo.
"""
import csv
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from learn_curve import fmt, mean_se  # noqa: E402
from tables import table  # noqa: E402

COLS = ["env_id", "arm", "episode", "return", "success", "status", "turns", "skill"]
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])")
BOXED = re.compile(r"\\boxed\{([^{}]*)\}")


def pct(x):
    return "-" if x is None else f"{x:.0%}"


def hint_answers(hint):
    """What a reply could copy from a hint: its numbers and its `\\boxed{...}` answers, lower-cased."""
    return {x.lower() for x in NUMBER.findall(hint or "")} | {x.strip().lower() for x in BOXED.findall(hint or "") if x.strip()}


def names(text, word):
    return re.search(r"(?<![\w.])" + re.escape(word) + r"(?![\w])", text) is not None


def echo(episode, answers, hint):
    """Whether the episode's first reply names one of `answers` that its first observation does not show;
    None when there is nothing to copy (no answers, or the transcript lacks a first observation and reply)."""
    try:
        msgs = json.loads(episode.get("transcript") or "{}").get("messages", [])
    except ValueError:
        return None
    users = [m.get("content") or "" for m in msgs if m.get("role") == "user"]
    replies = [m.get("content") or "" for m in msgs if m.get("role") == "assistant"]
    if not users or not replies:
        return None
    seen = users[0].lower().replace(hint.lower(), "") if hint else users[0].lower()
    fresh = [a for a in answers if not names(seen, a)]
    if not fresh:
        return None
    reply = replies[0].lower()
    return any(names(reply, a) for a in fresh)


def summary(rows):
    """Mean lift, its standard error over environments, and the share with a lift above 0."""
    lifts = [r["lift"] for r in rows]
    m, se = mean_se(lifts)
    return {
        "envs": len(rows),
        "mean_lift": m,
        "mean_lift_se": se,
        "positive_share": (sum(1 for x in lifts if x > 0) / len(lifts)) if lifts else None,
        "nohint_mean": mean_se([r["nohint_win"] for r in rows])[0],
        "hint_mean": mean_se([r["hint_win"] for r in rows])[0],
        # Over the environments whose hint has something to copy.
        "nohint_echo": mean_se([r["nohint_echo"] for r in rows if r["nohint_echo"] is not None])[0],
        "hint_echo": mean_se([r["hint_echo"] for r in rows if r["hint_echo"] is not None])[0],
        "echo_envs": sum(1 for r in rows if r["hint_echo"] is not None),
    }


def lift(run):
    envs = {r["env_id"]: r for r in table(os.path.join(run, "envs.parquet"))}
    path = os.path.join(run, "rollouts.parquet")
    # Plays slimmed of their transcripts (scripts/slim-plays.py) have no echo to count.
    eps = table(path, columns=COLS + ["transcript"]) or table(path, columns=COLS)
    if not eps:
        print(f"error: {path}: no episodes", file=sys.stderr)
        return 2
    by = {}
    for r in eps:
        by.setdefault(r["env_id"], {}).setdefault(r["arm"], []).append(r)
    out = []
    for env_id, arms in by.items():
        if "hint" not in arms or "nohint" not in arms:
            continue
        e = envs.get(env_id, {})
        row = {"source": e.get("source") or env_id, "skill": e.get("skill"), "env_id": env_id}
        answers = hint_answers(e.get("hint"))
        for arm in ("nohint", "hint"):
            xs = arms[arm]
            m, se = mean_se([float(r["return"]) for r in xs if r["status"] == "ok"])
            row[f"{arm}_episodes"] = len(xs)
            row[f"{arm}_win"], row[f"{arm}_win_se"] = m if m is not None else 0.0, se
            row[f"{arm}_success"] = sum(1 for r in xs if r["success"]) / len(xs)
            row[f"{arm}_not_ok"] = sum(1 for r in xs if r["status"] != "ok") / len(xs)
            echoes = [x for x in (echo(r, answers, e.get("hint")) for r in xs) if x is not None] if answers else []
            row[f"{arm}_echo"] = sum(echoes) / len(echoes) if echoes else None
        row["lift"] = row["hint_win"] - row["nohint_win"]
        ses = [row["nohint_win_se"], row["hint_win_se"]]
        row["lift_se"] = (ses[0] ** 2 + ses[1] ** 2) ** 0.5 if None not in ses else None
        row["ever_won"] = row["nohint_success"] > 0 or row["hint_success"] > 0
        out.append(row)
    if not out:
        print(f"error: {run}: no environment was played in both arms (spade-rollout --arms hint,nohint)", file=sys.stderr)
        return 2
    out.sort(key=lambda r: (-r["lift"], r["source"]))
    keys = ["source", "skill", "nohint_episodes", "nohint_win", "nohint_win_se", "hint_episodes", "hint_win", "hint_win_se",
            "lift", "lift_se", "nohint_success", "hint_success", "nohint_not_ok", "hint_not_ok", "nohint_echo", "hint_echo",
            "ever_won", "env_id"]
    tmp = os.path.join(run, "lift.csv.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(keys)
        for r in out:
            w.writerow([fmt(r[k]) for k in keys])
    os.replace(tmp, os.path.join(run, "lift.csv"))
    s = {"ever_won": summary([r for r in out if r["ever_won"]]), "all": summary(out)}
    tmp = os.path.join(run, "lift.json.tmp")
    with open(tmp, "w") as f:
        json.dump(s, f, indent=1)
    os.replace(tmp, os.path.join(run, "lift.json"))
    e = s["ever_won"]
    if e["envs"]:
        print(f"hint lift over the {e['envs']} environments ever won: {e['mean_lift']:+.3f}"
              f" (se {fmt(e['mean_lift_se'])}), positive on {e['positive_share']:.0%};"
              f" no-hint {e['nohint_mean']:.3f}, hint {e['hint_mean']:.3f}", file=sys.stderr)
    if e["echo_envs"]:
        print(f"first replies naming the hint's own numbers or answers ({e['echo_envs']} environments):"
              f" hint arm {e['hint_echo']:.0%}, no-hint arm {pct(e['nohint_echo'])}",
              file=sys.stderr)
    print(os.path.join(run, "lift.csv"))
    return 0


def read_hints(path):
    """{file name: hint} from a tab-separated hints file; errors name the file and line."""
    hints = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
                raise ValueError(f"{path}:{n}: expected `file<TAB>hint`")
            if parts[0] in hints:
                raise ValueError(f"{path}:{n}: {parts[0]} has a hint already")
            hints[parts[0]] = parts[1].strip()
    return hints


def swap(hints_path, out, files):
    """Write each of FILES into OUT with its hint line replaced; every file must have a hint and a hint line."""
    try:
        hints = read_hints(hints_path)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    staged = []
    files = [q for p in files for q in ([os.path.join(p, n) for n in sorted(os.listdir(p)) if n.endswith(".py")]
                                         if os.path.isdir(p) else [p])]
    for path in files:
        name = os.path.basename(path)
        if name not in hints:
            print(f"error: {hints_path}: no hint for {name}", file=sys.stderr)
            return 2
        try:
            lines = open(path).read().split("\n")
        except OSError as e:
            print(f"error: {path}: {e.strerror}", file=sys.stderr)
            return 2
        at = [i for i, l in enumerate(lines) if l.startswith("# hint:")]
        if len(at) != 1:
            print(f"error: {path}: expected one `# hint:` line, found {len(at)}", file=sys.stderr)
            return 2
        lines[at[0]] = f"# hint: {hints[name]}"
        staged.append((name, "\n".join(lines)))
    os.makedirs(out, exist_ok=True)
    for name, text in staged:
        tmp = os.path.join(out, name + ".tmp")
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, os.path.join(out, name))
    print(f"{len(staged)} environments with hints from {hints_path} in {out}", file=sys.stderr)
    return 0


def main(argv):
    if argv[:1] == ["--swap"]:
        if len(argv) < 4:
            print("usage: hint_lift.py --swap HINTS OUT FILE...", file=sys.stderr)
            return 2
        return swap(argv[1], argv[2], argv[3:])
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: hint_lift.py RUN | hint_lift.py --swap HINTS OUT FILE...", file=sys.stderr)
        return 2
    if not os.path.isdir(argv[0]):
        print(f"error: {argv[0]}: no such run folder", file=sys.stderr)
        return 2
    return lift(argv[0])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]) or 0)
