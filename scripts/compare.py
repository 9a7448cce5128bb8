#!/usr/bin/env python3
"""`make experiment`: compare the arms of an experiment, round by round.

usage: compare.py runs/<exp> ARM [ARM...]

Each arm is a spade run folder runs/<exp>/<arm>. Reads only spade's files (the round tables and
metrics.jsonl, with pyarrow) and writes runs/<exp>/compare.csv (one row per arm and round) and
runs/<exp>/compare.html (one plot per metric, one line per arm, error bars = one standard error),
runs/<exp>/compare.png (the six main metrics in one figure, for a README), runs/<exp>/compare.md (the
table in Markdown, mean ± standard error; then, per arm, round and evaluation measure, the paired
difference over the items both evaluated to the start and to the fixed-pool arm's same round, with a
95% interval over items and, where items have several samples (environments' episodes on the same
seeds), one with the items fixed), and prints the CSV's path. Round 0 is the starting model's evaluation (eval-start.parquet of the
first arm that has one); its training columns are empty.

Columns: validity (valid share of designed candidates), edge_share (share of played environments
whose no-hint win rate is in [0.4, 0.6]), regret (mean hint − no-hint win rate over played
environments), vendi_per_n (of the memory after the round), nohint_return (agent's mean no-hint
training return), heldout_env (held-out environment suites' mean return), rg (Reasoning-Gym
suites' mean score), each *_se its standard error (over environments or eval items), heldout_env_se_fixed the
held-out mean's standard error with the environments fixed (their episodes the draw); compute:
episodes, generated_tokens (agent), agent_tokens_trained, designer_tokens_trained. Signals
(issue #42): hint_lift_positive (share of played environments whose hint arm won more than the
no-hint arm), designer_variance_share (share of the round's designer advantage groups whose rewards
were not all equal, so they carried a gradient), envs_played (distinct environments played).
"""
import csv
import glob
import json
import html
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import episodes, png, read_metrics, table, validity_of  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

COLUMNS = ["arm", "round", "validity", "edge_share", "edge_share_se", "regret", "regret_se", "vendi_per_n",
           "nohint_return", "nohint_return_se", "heldout_env", "heldout_env_se", "heldout_env_se_fixed", "rg", "rg_se", "episodes",
           "generated_tokens", "agent_tokens_trained", "designer_tokens_trained", "hint_lift_positive",
           "hint_lift_positive_se", "designer_variance_share", "envs_played", "round_seconds", "eval_seconds", "eval_share"]


def mean_se(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None, None
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, 0.0
    var = sum((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return m, math.sqrt(var / len(xs))


def item_key(r):
    """An eval row's item: (suite, task, item_id)."""
    return r["suite"], r["task"], r["item_id"]


def item_samples(rows, pick):
    """The scores of each eval item's samples, per item, of the suites `pick` accepts."""
    per_item = {}
    for r in rows:
        if pick(r["suite"]):
            per_item.setdefault(item_key(r), []).append(r["score"])
    return per_item


def eval_scores(rows, pick):
    """Mean and item-level standard error of the eval rows whose suite `pick` accepts."""
    return mean_se([sum(v) / len(v) for v in item_samples(rows, pick).values()])


def fixed_se(per_item):
    """Standard error of the mean over items with the items fixed and their samples the random draw:
    √(Σ s²ᵢ/nᵢ)/K over the K items' sample variances (as spade-eval's `stderr_within`; an item with
    one sample adds nothing); None without items."""
    if not per_item:
        return None
    return math.sqrt(sum(mean_se(v)[1] ** 2 for v in per_item.values())) / len(per_item)


def se_items_fixed(rows, pick):
    """`fixed_se` of the eval rows whose suite `pick` accepts."""
    return fixed_se(item_samples(rows, pick))


def item_scores(rows, pick):
    """Mean score per eval item ((suite, task, item_id), over its samples) of the suites `pick` accepts."""
    return {k: sum(v) / len(v) for k, v in item_samples(rows, pick).items()}


def sample_scores(rows, pick):
    """Score per ((suite, task, item_id), sample) of the suites `pick` accepts."""
    return {(item_key(r), r["sample"]): r["score"] for r in rows if pick(r["suite"])}


def paired(rows, ref, pick):
    """Paired difference rows − ref over the items both evaluated: (mean, 95% low, 95% high, n items,
    95% low and high with the items fixed), the first interval mean ± 1.96 standard errors of the
    per-item differences (items drawn from a population), the second from the spread of the per-sample
    differences within each item (episodes on the same environment seeds), `fixed_se`: None, None
    where no item has two common samples; None without common items."""
    a, b = item_scores(rows, pick), item_scores(ref, pick)
    d = [a[k] - b[k] for k in a if k in b]
    if not d:
        return None
    m, se = mean_se(d)
    sa, sb = sample_scores(rows, pick), sample_scores(ref, pick)
    diffs = {}
    for key, x in sa.items():
        if key in sb:
            diffs.setdefault(key[0], []).append(x - sb[key])
    fixed = (None, None)
    if any(len(v) >= 2 for v in diffs.values()):
        se_w = fixed_se(diffs)
        fixed = (m - 1.96 * se_w, m + 1.96 * se_w)
    return (m, m - 1.96 * se, m + 1.96 * se, len(d)) + fixed


MEASURES = [("heldout_env", "held-out envs", lambda s: s.startswith("envs:")), ("rg", "rg:easy", lambda s: s.startswith("rg"))]


def paired_rows(evals, start, arms, baseline="fixed-pool"):
    """Per arm, round and measure: the paired difference to the start and to the baseline arm's same round."""
    out = []
    for (arm, r), rows in sorted(evals.items(), key=lambda kv: (arms.index(kv[0][0]), kv[0][1])):
        for key, title, pick in MEASURES:
            row = {"arm": arm, "round": r, "measure": title}
            for name, ref in (("start", start), (baseline, evals.get((baseline, r)) if arm != baseline else None)):
                row[name] = paired(rows, ref, pick) if ref else None
            if row["start"] or row.get(baseline):
                out.append(row)
    return out


def paired_markdown(prows, baseline="fixed-pool"):
    def cell(p):
        if p is None:
            return ""
        text = "%+.3f [%+.3f, %+.3f] (%d)" % p[:4]
        return text if p[4] is None else text + "; items fixed [%+.3f, %+.3f]" % p[4:]
    lines = ["| arm | round | measure | vs start | vs %s |" % baseline, "| --- | --- | --- | --- | --- |"]
    for r in prows:
        lines.append("| %s | %s | %s | %s | %s |" % (r["arm"], r["round"], r["measure"], cell(r["start"]), cell(r.get(baseline))))
    return lines


def eval_row(rows):
    out = {}
    out["heldout_env"], out["heldout_env_se"] = eval_scores(rows, lambda s: s.startswith("envs:"))
    out["heldout_env_se_fixed"] = se_items_fixed(rows, lambda s: s.startswith("envs:"))
    out["rg"], out["rg_se"] = eval_scores(rows, lambda s: s.startswith("rg"))
    return out


def round_row(run, rd, metrics):
    r = int(rd.rsplit("-", 1)[1])
    row = {"round": r}
    row["validity"] = validity_of(rd)
    eps = episodes(rd)
    row["episodes"] = len(eps)
    ok = [e for e in eps if e.get("status") == "ok"]
    per_env = {}
    for e in ok:
        per_env.setdefault(e["env_id"], {}).setdefault(e["arm"], []).append(e["return"])
    nohint = {k: sum(v["nohint"]) / len(v["nohint"]) for k, v in per_env.items() if v.get("nohint")}
    if nohint:
        p = sum(1 for x in nohint.values() if 0.4 <= x <= 0.6) / len(nohint)
        row["edge_share"], row["edge_share_se"] = p, math.sqrt(p * (1 - p) / len(nohint))
    lifts = [sum(v["hint"]) / len(v["hint"]) - nohint[k] for k, v in per_env.items() if v.get("hint") and k in nohint]
    row["regret"], row["regret_se"] = mean_se(lifts)
    row["hint_lift_positive"], row["hint_lift_positive_se"] = mean_se([1.0 if x > 0 else 0.0 for x in lifts])
    row["envs_played"] = len({e["env_id"] for e in eps})
    row["nohint_return"], row["nohint_return_se"] = mean_se(list(nohint.values()))
    mine = [m for m in metrics if m.get("round") == r]
    vendi = [(m.get("memory") or {}).get("vendi_per_n") for m in mine if m.get("stage") == "spade-regret"]
    vendi = [v for v in vendi if v is not None]
    row["vendi_per_n"] = vendi[-1] if vendi else None
    row["generated_tokens"] = sum(((m.get("play") or {}).get("generated_tokens") or 0)
                                  for m in mine if m.get("stage") == "spade-rollout")
    grpo = [m.get("metrics") or {} for m in mine if m.get("stage") == "spade-grpo-step"]
    row["agent_tokens_trained"] = sum((g.get("agent") or {}).get("tokens", 0) for g in grpo)
    row["designer_tokens_trained"] = sum((g.get("designer") or {}).get("tokens", 0) for g in grpo)
    groups = [(m.get("groups") or {}).get("designer") or {} for m in mine if m.get("stage") == "spade-grpo-step"]
    n_groups = sum(g.get("groups", 0) for g in groups)
    row["designer_variance_share"] = (n_groups - sum(g.get("dropped_groups", 0) for g in groups)) / n_groups if n_groups else None
    row.update(stage_time(mine) if r > 0 else {})
    row.update(eval_row(table(os.path.join(rd, "eval.parquet"))))
    return row


def stage_time(mine):
    """A round's seconds per stage (summed over its steps and shards, from each stage's metrics line),
    their total and the evaluation's share of it (issue #42: eval at most a quarter of a round)."""
    secs = {}
    for m in mine:
        # The trainer (spade-grpo-step) reports its wall time as `wall_s`, the other stages `seconds`.
        s = m.get("seconds", m.get("wall_s"))
        if m.get("stage") and isinstance(s, (int, float)):
            secs[m["stage"]] = secs.get(m["stage"], 0.0) + s
    total = sum(secs.values())
    if not total:
        return {}
    ev = secs.get("spade-eval")
    return {"stage_seconds": secs, "round_seconds": total, "eval_seconds": ev,
            "eval_share": ev / total if ev is not None else None}


def draw(ax, title, rows, arms, key):
    """One metric, one line per arm, error bars of one standard error; whether anything was drawn."""
    drawn = False
    for arm in arms:
        pts = [(r["round"], r[key], r.get(key + "_se") or 0.0) for r in rows if r["arm"] == arm and r.get(key) is not None]
        if pts:
            xs, ys, es = zip(*pts)
            ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=arm, color="C%d" % arms.index(arm))  # one colour per arm
            drawn = True
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("round")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if drawn:
        ax.legend(fontsize=7)
    return drawn


def errorbar_plot(title, rows, arms, key):
    fig, ax = plt.subplots(figsize=(6, 3.2))
    draw(ax, title, rows, arms, key)
    return png(fig)


FIGURE = ["heldout_env", "rg", "nohint_return", "edge_share", "regret", "validity"]


MD = [("validity", "validity"), ("edge_share", "edge share"), ("regret", "regret"), ("vendi_per_n", "Vendi/n"),
      ("nohint_return", "no-hint return"), ("heldout_env", "held-out envs"), ("rg", "rg:easy"), ("episodes", "episodes"),
      ("agent_tokens_trained", "agent tokens trained"), ("designer_tokens_trained", "designer tokens trained"),
      ("hint_lift_positive", "hint helps (share)"), ("designer_variance_share", "designer groups with variance"),
      ("envs_played", "environments played")]


def markdown(path, rows, paired_lines=()):
    """The comparison as a Markdown table, mean ± standard error where there is one, then the
    paired differences of the evaluation (`paired_lines`)."""
    def cell(r, key):
        v = r.get(key)
        if v is None:
            return ""
        if isinstance(v, float):
            se = r.get(key + "_se")
            return "%.3f ± %.3f" % (v, se) if se is not None else "%.3f" % v
        return "{:,}".format(v) if isinstance(v, int) else str(v)
    lines = ["| arm | round | " + " | ".join(t for _, t in MD) + " |", "| --- " * (len(MD) + 2) + "|"]
    for r in rows:
        lines.append("| %s | %s | " % (r["arm"], r["round"]) + " | ".join(cell(r, k) for k, _ in MD) + " |")
    if paired_lines:
        lines += ["", "Paired differences of the evaluation, per item (same items and seeds in every arm): mean "
                  "[95% interval] (items)", ""] + list(paired_lines)
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(path + ".tmp", path)


def figure(path, rows, arms):
    """The main metrics as one 2×3 PNG."""
    titles = dict(PLOTS)
    fig, axes = plt.subplots(2, 3, figsize=(13, 6.5))
    for ax, key in zip(axes.flat, FIGURE):
        draw(ax, titles[key], rows, arms, key)
    fig.tight_layout()
    fig.savefig(path + ".tmp.png", dpi=90)
    plt.close(fig)
    os.replace(path + ".tmp.png", path)


PLOTS = [
    ("validity", "designer validity rate"),
    ("edge_share", "share of played environments with no-hint win rate in [0.4, 0.6]"),
    ("regret", "mean regret (hint − no-hint win rate)"),
    ("vendi_per_n", "Vendi score / n of the memory"),
    ("nohint_return", "agent no-hint training return"),
    ("heldout_env", "held-out environments: no-hint return (greedy)"),
    ("rg", "Reasoning-Gym score (greedy)"),
    ("episodes", "episodes played"),
    ("agent_tokens_trained", "agent tokens trained"),
    ("designer_tokens_trained", "designer tokens trained"),
]


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: compare.py runs/<exp> ARM [ARM...]")
    exp, arms = sys.argv[1], sys.argv[2:]
    if not os.path.isdir(exp):
        sys.exit("error: %s: no such experiment folder" % exp)
    start, start_rows, evals = None, None, {}
    for arm in arms:
        p = os.path.join(exp, arm, "eval-start.parquet")
        if os.path.exists(p):
            start_rows = table(p)
            start = eval_row(start_rows)
            break
    rows = []
    for arm in arms:
        run = os.path.join(exp, arm)
        if not os.path.isdir(run):
            sys.exit("error: %s: no such run folder (arm %s)" % (run, arm))
        metrics = read_metrics(run)
        if start is not None:
            rows.append(dict(start, arm=arm, round=0))
        evaluated = {m.get("round") for m in metrics if m.get("stage") == "spade-eval"}
        every = int((json.load(open(os.path.join(run, "config.json"))) if os.path.exists(os.path.join(run, "config.json")) else {}).get("eval_every") or 1)
        for rd in sorted(glob.glob(os.path.join(run, "round-*"))):
            r = int(rd.rsplit("-", 1)[1])
            # Finished rounds only (a run may be going on): trained, and evaluated when the round evaluates.
            if os.path.exists(os.path.join(rd, "memory.parquet")) and (r % every != 0 or r in evaluated):
                rows.append(dict(round_row(run, rd, metrics), arm=arm))
                ev = table(os.path.join(rd, "eval.parquet"))
                if ev:
                    evals[(arm, r)] = ev
    out = os.path.join(exp, "compare.csv")
    with open(out + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else (round(r[k], 6) if isinstance(r[k], float) else r[k])) for k in COLUMNS})
    os.replace(out + ".tmp", out)
    parts = ["<h1>spade experiment %s</h1>" % html.escape(os.path.basename(exp.rstrip("/"))),
             "<p>arms: %s; error bars: one standard error; round 0: the starting model</p>" % html.escape(", ".join(arms))]
    for key, title in PLOTS:
        parts.append(errorbar_plot(title, rows, arms, key))
    page = os.path.join(exp, "compare.html")
    with open(page + ".tmp", "w") as f:
        f.write("<!doctype html><meta charset=utf-8><title>spade experiment</title>"
                "<style>body{font-family:sans-serif;max-width:960px;margin:auto}</style>")
        f.write("\n".join(parts))
    os.replace(page + ".tmp", page)
    figure(os.path.join(exp, "compare.png"), rows, arms)
    markdown(os.path.join(exp, "compare.md"), rows, paired_markdown(paired_rows(evals, start_rows, arms)))
    print(out)


if __name__ == "__main__":
    main()
