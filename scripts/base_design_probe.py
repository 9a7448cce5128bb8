#!/usr/bin/env python3
"""Which base model writes valid environments? A few-shot probe through llama-server (issue #42).

The round's designer is a warm-started SmolLM2-135M; whether a larger model is worth supporting is
asked here without any engine or trainer work: the design prompts of a finished round (its
`candidates` table, chat-formatted for the default model) are rewritten as one plain-text, one-shot
prompt each (the instructions, one seed environment of the same skill as a worked answer, then the
round's document and skill) and completed by any GGUF model `llama-server` serves, so a base model
with no chat template is asked the same thing as the default model. Each completion is written as a
`.py` file for `spade-validate`, which gives the verdicts.

    # 1. prompts, detokenised by a llama-server serving the model the round designed with
    python3 scripts/base_design_probe.py prompts --candidates runs/warm2/round-0001/candidates.parquet \
        --server http://127.0.0.1:8101 --seeds data/seed-envs -o probe/prompts.jsonl
    # 2. completions from each model under test (a llama-server per model)
    python3 scripts/base_design_probe.py complete --prompts probe/prompts.jsonl \
        --server http://127.0.0.1:8102 --per-prompt 2 --temperature 0.5 -o probe/gemma
    # 3. spade-validate probe/gemma/*.py --known runs/warm2/memory-0000.parquet -o ... --rejects ...
"""

import argparse
import concurrent.futures
import json
import pathlib
import re
import sys
import urllib.request


def post(server, path, body, timeout=1800):
    req = urllib.request.Request(server.rstrip("/") + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.load(r)


def chat_parts(text):
    """(system, user) of a ChatML prompt."""
    sys_m = re.search(r"<\|im_start\|>system\n(.*?)<\|im_end\|>", text, re.S)
    user_m = re.search(r"<\|im_start\|>user\n(.*?)<\|im_end\|>", text, re.S)
    if not sys_m or not user_m:
        raise ValueError("prompt is not ChatML (no system or user turn)")
    return sys_m.group(1).strip(), user_m.group(1).strip()


def seed_by_skill(seeds):
    """skill -> the shortest seed environment of that skill (easy levels are the shortest)."""
    best = {}
    for p in sorted(pathlib.Path(seeds).glob("*.py")):
        code = p.read_text()
        m = re.match(r"# skill: *([\w-]+)", code)
        if not m or "# setting: games" not in code[:200]:
            continue
        code = code.split("# --- solver ---")[0].rstrip() + "\n"
        if m.group(1) not in best or len(code) < len(best[m.group(1)]):
            best[m.group(1)] = code
    return best


def cmd_prompts(a):
    import pyarrow.parquet as pq

    wait_ready(a.server)
    rows = pq.read_table(a.candidates, columns=["doc_id", "skill", "sample", "prompt_ids"]).to_pylist()
    seen, prompts = set(), []
    examples = seed_by_skill(a.seeds)
    for r in rows:
        if (r["doc_id"], r["skill"]) in seen:
            continue
        seen.add((r["doc_id"], r["skill"]))
        text = post(a.server, "/detokenize", {"tokens": r["prompt_ids"]})["content"]
        system, user = chat_parts(text)
        prompts.append({"doc_id": r["doc_id"], "skill": r["skill"], "system": system, "user": user})
    out = []
    for i, p in enumerate(prompts):
        # The worked answer: a seed environment of the same skill, asked for by another prompt's text
        # (another document), so the example's request and answer are a real pair of the pool's form.
        other = next((q for q in prompts[i + 1:] + prompts[:i] if q["skill"] == p["skill"]), None)
        code = examples.get(p["skill"])
        if other is None or code is None:
            other, code = prompts[(i + 1) % len(prompts)], examples.get(prompts[(i + 1) % len(prompts)]["skill"])
        if code is None:
            sys.exit(f"error: {a.seeds}: no games seed environment with skill {p['skill']!r}")
        text = (f"{p['system']}\n\n### Request\n{other['user']}\n\n### Answer\n```python\n{code}```\n\n"
                f"### Request\n{p['user']}\n\n### Answer\n```python\n")
        head = f"# skill: {p['skill']}\n# setting: games\n# hint:"
        out.append({"doc_id": p["doc_id"], "skill": p["skill"], "prompt": text + head, "head": head})
    pathlib.Path(a.output).parent.mkdir(parents=True, exist_ok=True)
    with open(a.output, "w") as f:
        for o in out:
            f.write(json.dumps(o) + "\n")
    print(f"{len(out)} prompts -> {a.output}", file=sys.stderr)


def wait_ready(server, seconds=300):
    """Wait for llama-server's /health to answer 200 (it answers 503 while loading the model)."""
    import time
    for _ in range(seconds):
        try:
            with urllib.request.urlopen(server.rstrip("/") + "/health", timeout=5) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(1)
    sys.exit(f"error: {server}: not ready after {seconds} s")


def cmd_complete(a):
    wait_ready(a.server)
    prompts = [json.loads(line) for line in open(a.prompts)]
    outdir = pathlib.Path(a.output)
    outdir.mkdir(parents=True, exist_ok=True)
    jobs = [(i, k, p) for i, p in enumerate(prompts) for k in range(a.per_prompt)]

    def one(job):
        i, k, p = job
        path = outdir / f"p{i:03d}_s{k}.py"
        if path.exists():
            return path, None
        r = post(a.server, "/completion", {"prompt": p["prompt"], "n_predict": a.max_tokens,
                                             "temperature": a.temperature, "top_p": 1.0, "top_k": 0,
                                             "min_p": 0.0, "seed": a.seed * 100003 + i * 31 + k,
                                             "stop": ["```", "\n### "], "cache_prompt": True})
        code = p["head"] + r["content"]
        path.write_text(code if code.endswith("\n") else code + "\n")
        return path, r.get("tokens_predicted"), r.get("stop_type") or ("limit" if r.get("stopped_limit") else "stop")

    with concurrent.futures.ThreadPoolExecutor(a.concurrency) as ex:
        for n, res in enumerate(ex.map(one, jobs), 1):
            print(f"[{n}/{len(jobs)}] {res}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prompts")
    p.add_argument("--candidates", required=True)
    p.add_argument("--server", required=True)
    p.add_argument("--seeds", default="data/seed-envs")
    p.add_argument("-o", "--output", required=True)
    c = sub.add_parser("complete")
    c.add_argument("--prompts", required=True)
    c.add_argument("--server", required=True)
    c.add_argument("--per-prompt", type=int, default=2)
    c.add_argument("--temperature", type=float, default=0.5)
    c.add_argument("--max-tokens", type=int, default=1536)
    c.add_argument("--concurrency", type=int, default=4)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    {"prompts": cmd_prompts, "complete": cmd_complete}[a.cmd](a)


if __name__ == "__main__":
    main()
