#!/usr/bin/env python3
"""`make report RUN=name`: a self-contained HTML page (PNG plots inlined) of a spade run.

Reads only spade's files — runs/<name>/metrics.jsonl and the round folders' tables — with pyarrow,
so it also works on a run produced by swapped-in stages that honour the file contracts.
Writes runs/<name>/report.html and prints its path.
"""
import base64
import glob
import html
import io
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tables import table  # noqa: E402,F401  (report.table: compare.py imports it from here)


def read_metrics(run):
    path = os.path.join(run, "metrics.jsonl")
    rows = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    rows.append(json.loads(line))
    return rows


def png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return '<img src="data:image/png;base64,%s"/>' % base64.b64encode(buf.getvalue()).decode()


def validity_of(rd):
    """Valid share of a round folder's designed candidates (None when it designed nothing)."""
    envs, rejects = table(os.path.join(rd, "envs.parquet")), table(os.path.join(rd, "rejects.parquet"))
    return len(envs) / (len(envs) + len(rejects)) if envs or rejects else None


def episodes(rd):
    """Every episode of a round folder's agent steps."""
    eps = []
    for p in sorted(glob.glob(os.path.join(rd, "step-*", "rollouts.parquet"))):
        eps += table(p)
    return eps


def line_plot(title, series, xlabel="round"):
    fig, ax = plt.subplots(figsize=(6, 3.2))
    drawn = False
    for name, pts in series.items():
        pts = [(x, y) for x, y in pts if y is not None]
        if pts:
            xs, ys = zip(*pts)
            ax.plot(xs, ys, marker="o", label=name)
            drawn = True
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    if drawn:
        ax.legend(fontsize=7)
    return png(fig)


def hist_plot(title, groups):
    fig, ax = plt.subplots(figsize=(6, 3.2))
    for name, xs in groups.items():
        xs = [x for x in xs if x is not None]
        if xs:
            ax.hist(xs, bins=20, alpha=0.6, label="%s (n=%d)" % (name, len(xs)))
    ax.set_title(title)
    ax.legend(fontsize=7)
    return png(fig)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: report.py runs/<name>")
    run = sys.argv[1]
    if not os.path.isdir(run):
        sys.exit("error: %s: no such run folder" % run)
    metrics = read_metrics(run)
    rounds = sorted(glob.glob(os.path.join(run, "round-*")))
    parts = ["<h1>spade run %s</h1>" % html.escape(os.path.basename(run.rstrip("/")))]
    cfg = os.path.join(run, "config.json")
    if os.path.exists(cfg):
        parts.append("<h2>Configuration</h2><pre>%s</pre>" % html.escape(open(cfg).read()))

    # Validity and returns per round, from the tables themselves.
    validity, hint_wr, nohint_wr, regrets, rewards = {}, {}, {}, {}, {}
    for rd in rounds:
        r = int(rd.rsplit("-", 1)[1])
        v = validity_of(rd)
        if v is not None:
            validity[r] = v
        eps = episodes(rd)
        for arm, store in (("hint", hint_wr), ("nohint", nohint_wr)):
            xs = [e["return"] for e in eps if e.get("arm") == arm and e.get("status") == "ok"]
            store[r] = sum(xs) / len(xs) if xs else None
        for p in sorted(glob.glob(os.path.join(rd, "step-*", "scores.parquet"))):
            for s in table(p):
                regrets.setdefault(r, []).append(s.get("regret"))
                rewards.setdefault(r, []).append(s.get("designer_reward"))
    parts.append(signals_table(run, rounds, metrics))
    parts.append("<h2>Validity and returns</h2>")
    parts.append(line_plot("validity rate of designed environments", {"valid share": sorted(validity.items())}))
    parts.append(line_plot("mean return per arm", {"hint": sorted(hint_wr.items()), "no hint": sorted(nohint_wr.items())}))
    parts.append("<h2>Regret and designer reward</h2>")
    parts.append(hist_plot("regret (all scored rows)", {"round %d" % r: xs for r, xs in sorted(regrets.items())}))
    parts.append(hist_plot("raw designer reward", {"round %d" % r: xs for r, xs in sorted(rewards.items())}))

    # Diversity and training metrics, from metrics.jsonl.
    vendi = [(m.get("round"), (m.get("memory") or {}).get("vendi_per_n")) for m in metrics if m.get("stage") == "spade-regret"]
    parts.append("<h2>Pool diversity</h2>")
    parts.append(line_plot("memory Vendi score / n (collapse signal)", {"vendi/n": vendi}))
    grpo = [m for m in metrics if m.get("stage") == "spade-grpo-step"]
    if grpo:
        keys = sorted({k for m in grpo for k, v in flatten(m).items() if isinstance(v, (int, float)) and k not in ("round", "seed")})
        series = {k: [(i, flatten(m).get(k)) for i, m in enumerate(grpo)] for k in keys if any(s in k for s in ("loss", "kl", "clip", "grad_norm"))}
        parts.append("<h2>Training</h2>")
        for k, pts in series.items():
            parts.append(line_plot(k, {k: pts}, xlabel="GRPO step"))
    else:
        parts.append("<h2>Training</h2><p>no spade-grpo-step metrics yet</p>")

    # Eval per suite over rounds.
    ev = {}
    for rd in rounds:
        r = int(rd.rsplit("-", 1)[1])
        for row in table(os.path.join(rd, "eval.parquet")):
            ev.setdefault(row["suite"], {}).setdefault(r, []).append(row["score"])
    parts.append("<h2>Held-out evaluation</h2>")
    if ev:
        parts.append(line_plot("mean score per suite", {s: sorted((r, sum(x) / len(x)) for r, x in rs.items()) for s, rs in ev.items()}))
    else:
        parts.append("<p>no eval tables yet</p>")

    # Highest-regret environments of the latest memory.
    mems = sorted(glob.glob(os.path.join(run, "round-*", "memory.parquet")))
    parts.append("<h2>Highest-regret environments</h2>")
    if mems:
        mem = [m for m in table(mems[-1]) if m.get("regret") is not None]
        mem.sort(key=lambda m: -m["regret"])
        for m in mem[:5]:
            parts.append(
                "<h3>%s — %s, regret %.3f, no-hint win rate %s, label %s</h3><p>hint: %s</p><pre>%s</pre>"
                % (
                    html.escape(m["env_id"]),
                    html.escape(str(m.get("skill"))),
                    m["regret"],
                    "%.3f" % m["nohint_win_rate"] if m.get("nohint_win_rate") is not None else "-",
                    html.escape(m.get("label", "")),
                    html.escape(str(m.get("hint"))),
                    html.escape(m["code"]),
                )
            )
    else:
        parts.append("<p>no memory yet</p>")
    out = os.path.join(run, "report.html")
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write("<!doctype html><meta charset=utf-8><title>spade report</title>"
                "<style>body{font-family:sans-serif;max-width:960px;margin:auto}pre{background:#f4f4f4;padding:8px;overflow:auto;font-size:11px}</style>")
        f.write("\n".join(parts))
    os.replace(tmp, out)
    print(out)


def signals_table(run, rounds, metrics):
    """Per round, the self-play signals (issue #42): validity, rejects by stage, hint lift, designer
    groups with reward variance, the [0.4, 0.6] band share, environments played."""
    from compare import round_row  # compare.py imports this module: import here, not at the top

    def cell(v, se=None):
        if v is None:
            return "-"
        if isinstance(v, float):
            return ("%.3f ± %.3f" % (v, se)) if se is not None else "%.3f" % v
        return html.escape(str(v))

    head = ["round", "valid share", "rejects by stage", "hint lift (mean)", "hint helps (share)",
            "designer groups with variance", "no-hint win rate in [0.4, 0.6]", "environments played",
            "eval share of stage time"]
    rows, times = [], []
    for rd in rounds:
        r = round_row(run, rd, metrics)
        stages = {}
        for x in table(os.path.join(rd, "rejects.parquet")):
            stages[x.get("stage")] = stages.get(x.get("stage"), 0) + 1
        rejects = ", ".join("%s %d" % (k, v) for k, v in sorted(stages.items(), key=lambda kv: -kv[1])) or "-"
        rows.append([str(r["round"]), cell(r.get("validity")), html.escape(rejects), cell(r.get("regret"), r.get("regret_se")),
                     cell(r.get("hint_lift_positive")), cell(r.get("designer_variance_share")),
                     cell(r.get("edge_share"), r.get("edge_share_se")), cell(r.get("envs_played")),
                     cell(r.get("eval_share"))])
        times.append(r)
    out = ["<h2>Self-play signals per round</h2>",
           "<p>hint lift: the hint arm's win rate minus the no-hint arm's, per played environment (± one standard error); "
           "designer groups with variance: share of the designer's advantage groups whose rewards differ (the others carry no gradient)</p>",
           "<table border=1 cellspacing=0 cellpadding=3><tr>%s</tr>" % "".join("<th>%s</th>" % h for h in head)]
    out += ["<tr>%s</tr>" % "".join("<td>%s</td>" % c for c in row) for row in rows]
    out.append("</table>")
    out.append(time_table(times))
    return "\n".join(out)


STAGE_ORDER = ["spade-sample-corpus", "spade-design", "spade-validate", "spade-rollout", "spade-regret",
               "spade-grpo-step", "spade-eval"]


def time_table(rows):
    """Seconds per stage and round (each stage's own metrics line, summed over steps and shards)."""
    rows = [r for r in rows if r.get("stage_seconds")]
    if not rows:
        return "<h2>Time per stage</h2><p>no stage timings yet</p>"
    seen = {s for r in rows for s in r["stage_seconds"]}
    stages = [s for s in STAGE_ORDER if s in seen] + sorted(seen - set(STAGE_ORDER))
    out = ["<h2>Time per stage</h2>",
           "<p>seconds each stage reported for the round (summed over its steps, and over shards: compute, not wall time "
           "when shards ran in parallel); the evaluation's share of the total</p>",
           "<table border=1 cellspacing=0 cellpadding=3><tr><th>round</th>%s<th>total</th><th>eval share</th></tr>"
           % "".join("<th>%s</th>" % html.escape(s.replace("spade-", "")) for s in stages)]
    for r in rows:
        cells = ["%.0f" % r["stage_seconds"][s] if s in r["stage_seconds"] else "-" for s in stages]
        share = "%.3f" % r["eval_share"] if r.get("eval_share") is not None else "-"
        out.append("<tr><td>%d</td>%s<td>%.0f</td><td>%s</td></tr>"
                   % (r["round"], "".join("<td>%s</td>" % c for c in cells), r["round_seconds"], share))
    out.append("</table>")
    return "\n".join(out)


def flatten(d, prefix=""):
    out = {}
    for k, v in d.items():
        key = prefix + k
        if isinstance(v, dict):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out


if __name__ == "__main__":
    main()
