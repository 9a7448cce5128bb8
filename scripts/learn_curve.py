#!/usr/bin/env python3
"""The RL sanity curve of `make learn-check`, from its files alone.

    learn_curve.py RUN            RUN/curve.csv, RUN/curve.png and RUN/summary.json
    learn_curve.py --rates RUN    RUN/rates.csv: each environment's no-hint win rate (make learn-check-rates)

A row of curve.csv is one policy version v (the weights after v GRPO steps): the training win rate of
the no-hint episodes version v played in step v+1 (mean `return`, with its standard error; the hint
arm's apart, when the steps play it: LC_TRAIN_ARMS=hint,nohint), the held-out win
rates where version v was measured (the training environments on episode seeds never trained on; other
environments of the same families), and the update from v to v+1: tokens trained, each diagnostic of
`spade-grpo-step --diagnostics`, seconds by stage. summary.json: the training gain (last two trained
versions against the first two) and each held-out gain of the last measured version over version 0,
paired by environment and episode seed, with its 95% interval.
"""
import csv
import glob
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tables import table  # noqa: E402

COLS = ["token_ids", "loss_mask", "env_id", "episode", "return", "success", "status", "skill", "arm"]


def arm_episodes(path):
    """The ok episodes of a rollouts table by arm, each a dict of the columns the curve uses."""
    by = {}
    for r in table(path, columns=COLS):
        if r.get("status") == "ok":
            by.setdefault(r.get("arm", "nohint"), []).append(r)
    return by


def episodes(path):
    """The ok no-hint episodes of a rollouts table."""
    return arm_episodes(path).get("nohint", [])


def mean_se(xs):
    if not xs:
        return None, None
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, None
    var = sum((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return m, math.sqrt(var / len(xs))


def metrics_lines(path):
    """The parsed lines of a metrics.jsonl ([] when it is missing; a torn line is skipped)."""
    out = []
    if os.path.exists(path):
        with open(path) as f:
            for x in f:
                try:
                    out.append(json.loads(x))
                except json.JSONDecodeError:
                    continue
    return out


def last_metrics(path, stage):
    """The last metrics line of `stage` in a metrics.jsonl (a stage re-run after a kill appends again)."""
    lines = [v for v in metrics_lines(path) if v.get("stage") == stage]
    return lines[-1] if lines else None


def seconds(m):
    if not m:
        return None
    return m.get("wall_s", m.get("seconds"))


def paired_gain(a, b):
    """Mean of b − a over the (env_id, episode) pairs both have, with its 95% interval."""
    ka = {(r["env_id"], r["episode"]): r["return"] for r in a}
    d = [r["return"] - ka[(r["env_id"], r["episode"])] for r in b if (r["env_id"], r["episode"]) in ka]
    m, se = mean_se(d)
    if m is None:
        return None
    lo, hi = (m - 1.96 * se, m + 1.96 * se) if se is not None else (None, None)
    return {"pairs": len(d), "gain": m, "se": se, "ci95": [lo, hi]}


def fmt(x):
    if x is None:
        return ""
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def curve(run):
    cfg = {}
    if os.path.exists(os.path.join(run, "config.json")):
        with open(os.path.join(run, "config.json")) as f:
            cfg = json.load(f)
    steps = sorted(int(os.path.basename(p)[5:]) for p in glob.glob(os.path.join(run, "step-[0-9][0-9][0-9][0-9]")))
    helds = sorted(int(os.path.basename(p)[8:]) for p in glob.glob(os.path.join(run, "heldout-[0-9][0-9][0-9][0-9]")))
    versions = sorted(set([s - 1 for s in steps] + [s for s in steps if os.path.exists(os.path.join(run, f"step-{s:04d}", "checkpoint"))] + helds))
    rows, held_eps = [], {}
    for v in versions:
        row = {"version": v}
        sdir = os.path.join(run, f"step-{v + 1:04d}")
        played = arm_episodes(os.path.join(sdir, "rollouts.parquet"))
        eps = played.get("nohint", [])
        row["train_episodes"] = len(eps) or None
        row["train_win"], row["train_win_se"] = mean_se([r["return"] for r in eps])
        row["train_success"] = mean_se([1.0 if r["success"] else 0.0 for r in eps])[0]
        row["train_reply_tokens"] = (sum(sum(r["loss_mask"]) for r in eps) / len(eps)) if eps else None
        # Hint plays, when the steps train on them too (make learn-check LC_TRAIN_ARMS=hint,nohint).
        hint = played.get("hint", [])
        row["train_hint_episodes"] = len(hint) or None
        row["train_hint_win"] = mean_se([r["return"] for r in hint])[0]
        hdir = os.path.join(run, f"heldout-{v:04d}")
        for name in ("seeds", "family"):
            h = episodes(os.path.join(hdir, f"{name}.parquet"))
            if h:
                held_eps.setdefault(name, {})[v] = h
            row[f"heldout_{name}_episodes"] = len(h) or None
            row[f"heldout_{name}_win"], row[f"heldout_{name}_win_se"] = mean_se([r["return"] for r in h])
        row["heldout_s"] = sum(seconds(v) or 0.0 for v in metrics_lines(os.path.join(hdir, "metrics.jsonl"))) or None
        sm = os.path.join(sdir, "metrics.jsonl")
        ro, gr = last_metrics(sm, "spade-rollout"), last_metrics(sm, "spade-grpo-step")
        row["rollout_s"] = seconds(ro)
        row["grpo_s"] = seconds(gr)
        if gr:
            m = gr.get("metrics", {})
            a = m.get("agent", {})
            dg = m.get("diagnostics") or {}
            row.update(
                {
                    "samples_trained": a.get("samples"),
                    "tokens_trained": a.get("tokens"),
                    "kl_to_start": a.get("kl"),
                    "entropy": a.get("entropy"),
                    "ratio_mean": a.get("ratio_mean"),
                    "ratio_max": a.get("ratio_max"),
                    "clip_frac": a.get("clip_frac"),
                    "tis_mean": a.get("tis_mean"),
                    "grad_norm": m.get("grad_norm"),
                    "update_norm": dg.get("update_norm"),
                    "logp_win_before": (dg.get("win") or {}).get("before"),
                    "logp_win_after": (dg.get("win") or {}).get("after"),
                    "logp_lose_before": (dg.get("lose") or {}).get("before"),
                    "logp_lose_after": (dg.get("lose") or {}).get("after"),
                }
            )
        rows.append(row)
    keys = [
        "version", "train_episodes", "train_win", "train_win_se", "train_success", "train_reply_tokens",
        "train_hint_episodes", "train_hint_win", "heldout_seeds_episodes", "heldout_seeds_win", "heldout_seeds_win_se",
        "heldout_family_episodes", "heldout_family_win", "heldout_family_win_se",
        "samples_trained", "tokens_trained", "kl_to_start", "entropy", "ratio_mean", "ratio_max", "clip_frac", "tis_mean",
        "grad_norm", "update_norm", "logp_win_before", "logp_win_after", "logp_lose_before", "logp_lose_after",
        "rollout_s", "grpo_s", "heldout_s",
    ]
    tmp = os.path.join(run, "curve.csv.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(keys)
        for r in rows:
            w.writerow([fmt(r.get(k)) for k in keys])
    os.replace(tmp, os.path.join(run, "curve.csv"))

    trained = [r for r in rows if r["train_win"] is not None]
    summary = {"config": cfg, "versions": len(rows), "steps_done": sum(1 for r in rows if r.get("grpo_s") is not None)}
    if len(trained) >= 2:
        k = min(2, len(trained) // 2)
        first = [r["train_win"] for r in trained[:k]]
        last = [r["train_win"] for r in trained[-k:]]
        summary["train"] = {
            "first": sum(first) / k,
            "last": sum(last) / k,
            "gain_points": 100 * (sum(last) - sum(first)) / k,
            "versions_averaged": k,
        }
    for name, by_v in held_eps.items():
        vs = sorted(by_v)
        if 0 in by_v and len(vs) > 1:
            g = paired_gain(by_v[0], by_v[vs[-1]])
            if g:
                g["from_version"], g["to_version"] = 0, vs[-1]
                g["first"] = mean_se([r["return"] for r in by_v[0]])[0]
                g["last"] = mean_se([r["return"] for r in by_v[vs[-1]]])[0]
                summary[f"heldout_{name}"] = g
    timed = [r for r in rows if r.get("grpo_s") is not None and r.get("rollout_s") is not None]
    if timed:
        summary["seconds_per_step"] = {
            "rollout": sum(r["rollout_s"] for r in timed) / len(timed),
            "grpo": sum(r["grpo_s"] for r in timed) / len(timed),
            "heldout_total": sum(r["heldout_s"] or 0.0 for r in rows),
        }
    tmp = os.path.join(run, "summary.json.tmp")
    with open(tmp, "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    os.replace(tmp, os.path.join(run, "summary.json"))
    plot(run, rows)
    return rows, summary


def plot(run, rows):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(15, 4))
    for key, label, style in (
        ("train_win", "training (fresh episodes)", "o-"),
        ("heldout_seeds_win", "held-out seeds", "s--"),
        ("heldout_family_win", "held-out environments", "^--"),
    ):
        pts = [(r["version"], r[key], r.get(key + "_se") or 0.0) for r in rows if r.get(key) is not None]
        if pts:
            ax[0].errorbar([p[0] for p in pts], [p[1] for p in pts], yerr=[1.96 * p[2] for p in pts], fmt=style, capsize=3, label=label)
    ax[0].set_xlabel("policy version (GRPO steps)")
    ax[0].set_ylabel("no-hint win rate (mean return), 95% bars")
    ax[0].legend()
    ax[0].set_title(os.path.basename(os.path.normpath(run)))
    for side, style in (("win", "o-"), ("lose", "x--")):
        pts = [(r["version"], r[f"logp_{side}_after"] - r[f"logp_{side}_before"]) for r in rows if r.get(f"logp_{side}_after") is not None]
        if pts:
            ax[1].plot([p[0] for p in pts], [p[1] for p in pts], style, label=f"{side} (advantage {'> 0' if side == 'win' else '< 0'})")
    ax[1].axhline(0.0, color="grey", lw=0.8)
    ax[1].set_xlabel("update from version")
    ax[1].set_ylabel("change of mean log-prob per token by the update")
    ax[1].legend()
    for key, label in (("kl_to_start", "KL to start"), ("entropy", "entropy (sampled NLL)"), ("update_norm", "update norm"), ("clip_frac", "clip fraction")):
        pts = [(r["version"], r[key]) for r in rows if r.get(key) is not None]
        if pts:
            ax[2].plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=label)
    ax[2].set_yscale("symlog", linthresh=1e-3)
    ax[2].set_xlabel("update from version")
    ax[2].legend()
    fig.tight_layout()
    tmp = os.path.join(run, "curve.tmp.png")
    fig.savefig(tmp, dpi=80)
    plt.close(fig)
    os.replace(tmp, os.path.join(run, "curve.png"))


def rates(run):
    envs = {r["env_id"]: r for r in table(os.path.join(run, "envs.parquet"))}
    by = {}
    for r in episodes(os.path.join(run, "rollouts.parquet")):
        by.setdefault(r["env_id"], []).append(r)
    out = []
    for env_id, eps in by.items():
        e = envs.get(env_id, {})
        src = e.get("source") or e.get("class_name") or env_id
        m, se = mean_se([r["return"] for r in eps])
        out.append({
            "source": src, "skill": e.get("skill") or eps[0].get("skill"), "env_id": env_id, "episodes": len(eps),
            "win": m, "win_se": se, "success": mean_se([1.0 if r["success"] else 0.0 for r in eps])[0],
        })
    out.sort(key=lambda r: -r["win"])
    keys = ["source", "skill", "episodes", "win", "win_se", "success", "env_id"]
    tmp = os.path.join(run, "rates.csv.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(keys)
        for r in out:
            w.writerow([fmt(r[k]) for k in keys])
    os.replace(tmp, os.path.join(run, "rates.csv"))
    print(os.path.join(run, "rates.csv"))


def main(argv):
    if len(argv) == 2 and argv[0] == "--rates":
        return rates(argv[1])
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: learn_curve.py RUN | --rates RUN", file=sys.stderr)
        return 2
    if not os.path.isdir(argv[0]):
        print(f"error: {argv[0]}: no such run folder", file=sys.stderr)
        return 2
    rows, summary = curve(argv[0])
    t = summary.get("train")
    done = summary["steps_done"]
    msg = f"learn-check {argv[0]}: {done} steps"
    if t:
        msg += f"; training win {t['first']:.3f} -> {t['last']:.3f} ({t['gain_points']:+.1f} points)"
    for name in ("seeds", "family"):
        g = summary.get(f"heldout_{name}")
        if g and g["ci95"][0] is not None:
            msg += f"; held-out {name} {g['gain']:+.3f} [{g['ci95'][0]:+.3f}, {g['ci95'][1]:+.3f}]"
    print(msg, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]) or 0)
