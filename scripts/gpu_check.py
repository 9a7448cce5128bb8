"""Helpers of scripts/gpu-check.sh in Python (`random` needs PyTorch and transformers; the rest numpy).

  gpu_check.py random LIKE OUT           random weights in the shape of LIKE (config.json and the
                                         tokenizer files, as `gpu_check config` writes them): OUT
                                         is a Hugging Face folder PyTorch initialised (seed 0)
  gpu_check.py rollouts MODEL OUT.jsonl  agent rollouts for MODEL's vocabulary: 4 groups of 4
                                         episodes (2 per arm) of 48-96 random tokens, rewards that vary in a group
  gpu_check.py compare BASE A B          the updates of two checkpoints of BASE (A - BASE vs
                                         B - BASE): the largest difference between them must be at
                                         most 1e-3 of the largest change; prints one JSON line
"""
import json
import os
import random
import shutil
import sys

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "generation_config.json")


def random_weights(like, out):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.manual_seed(0)
    # unset fields as absent keys (transformers 5 refuses nulls such as "attention_bias": null)
    d = {k: v for k, v in json.load(open(os.path.join(like, "config.json"))).items() if v is not None}
    cfg = AutoConfig.for_model(d.pop("model_type"), **d)
    cfg.torch_dtype = "float32"
    model = AutoModelForCausalLM.from_config(cfg, torch_dtype=torch.float32)
    os.makedirs(out, exist_ok=True)
    model.save_pretrained(out, safe_serialization=True)
    for f in TOKENIZER_FILES:
        if os.path.exists(os.path.join(like, f)):
            shutil.copy(os.path.join(like, f), os.path.join(out, f))
    n = sum(p.numel() for p in model.parameters())
    print(json.dumps({"check": "random", "ok": True, "parameters": n, "out": out}))


def rollouts(model, out):
    vocab = json.load(open(os.path.join(model, "config.json")))["vocab_size"]
    rng = random.Random(1)
    rows = []
    for g in range(4):
        for e in range(4):
            n = rng.randint(48, 96)
            toks = [rng.randrange(3, vocab) for _ in range(n)]
            mask = [int(t >= 16) for t in range(n)]
            rows.append({
                "env_id": f"env-{g}", "arm": ("hint", "no-hint")[e % 2], "episode": e, "return": float(e // 2), "status": "ok",
                "token_ids": toks, "loss_mask": mask, "logprobs": [-2.0 * m for m in mask], "temperature": 1.0,
                "policy_version": 0,
            })
    with open(out, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    print(json.dumps({"check": "rollouts", "ok": True, "rows": len(rows), "vocab": vocab}))


def read_safetensors(path):
    """The tensors of one .safetensors file (8-byte header length, JSON header, raw data)."""
    import numpy as np

    dtypes = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32}
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        if t["dtype"] == "BF16":
            raw = np.frombuffer(data[a:b], dtype=np.uint16).astype(np.uint32) << 16
            out[name] = raw.view(np.float32).reshape(t["shape"])
        else:
            out[name] = np.frombuffer(data[a:b], dtype=dtypes[t["dtype"]]).reshape(t["shape"])
    return out


def tensors(folder):
    out = {}
    for f in sorted(os.listdir(folder)):
        if f.endswith(".safetensors"):
            out.update(read_safetensors(os.path.join(folder, f)))
    if not out:
        raise SystemExit(f"compare: no .safetensors in {folder}")
    return out


def compare(base, a, b, tol=1e-3):
    import numpy as np

    w0, wa, wb = tensors(base), tensors(a), tensors(b)
    change = diff = 0.0
    worst = None
    for name, t0 in w0.items():
        if name not in wa or name not in wb:
            raise SystemExit(f"compare: {name} is missing from {a if name not in wa else b}")
        da = wa[name].astype(np.float64) - t0.astype(np.float64)
        db = wb[name].astype(np.float64) - t0.astype(np.float64)
        change = max(change, float(np.abs(da).max()), float(np.abs(db).max()))
        d = float(np.abs(da - db).max())
        if d > diff:
            diff, worst = d, name
    ok = change > 0 and diff <= tol * change
    print(json.dumps({"check": "grpo-equal", "ok": ok, "max_change": change, "max_difference": diff,
                      "relative": diff / change if change else None, "tolerance": tol, "worst": worst,
                      "tensors": len(w0)}))
    return ok


def main(argv):
    if len(argv) == 3 and argv[0] == "random":
        random_weights(argv[1], argv[2])
    elif len(argv) == 3 and argv[0] == "rollouts":
        rollouts(argv[1], argv[2])
    elif len(argv) == 4 and argv[0] == "compare":
        return 0 if compare(*argv[1:]) else 1
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
