#!/usr/bin/python3
"""An independent PyTorch implementation of spade's GRPO step, for two uses.

`step`: the agreement test. Reads a model folder (config.json + model.safetensors, Llama/Qwen2/
Qwen3 layout, read without the safetensors package), a batch (JSON: samples with tokens, mask,
behaviour log-probs, temperature, reward, group, role) and a config (JSON), computes the
advantages, the loss (clipped ratio, truncated importance weight, k3 KL, loss aggregation) with
autograd in float64, clips the gradient and applies torch.optim.AdamW, and writes JSON: the
advantages, the first mini-batch's loss and gradients, and the weights after the step.

`bench`: the peer of crates/benches/grpo.rs. A SmolLM2-135M-shaped model with random weights,
N sequences x L tokens, one step per micro-batch size (each in a fresh process for its peak
memory): seconds of forward, backward and optimizer, tokens/s, peak RSS. Run it with
OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE unset and libopenblas0-pthread installed (see DESIGN).

Needs only Debian's python3-torch (no safetensors, no transformers).
"""

import argparse
import json
import math
import resource
import struct
import subprocess
import sys
import time

import torch

DTYPES = {"F32": torch.float32, "F64": torch.float64, "F16": torch.float16, "BF16": torch.bfloat16}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        buf = bytearray(data[base + a : base + b])
        t = torch.frombuffer(buf, dtype=DTYPES[info["dtype"]]) if b > a else torch.zeros(0, dtype=DTYPES[info["dtype"]])
        out[name] = t.reshape(info["shape"]).clone()
    return out


class Config:
    def __init__(self, c):
        self.hidden = c["hidden_size"]
        self.layers = c["num_hidden_layers"]
        self.heads = c["num_attention_heads"]
        self.kv_heads = c.get("num_key_value_heads") or self.heads
        self.head_dim = c.get("head_dim") or self.hidden // self.heads
        self.eps = c.get("rms_norm_eps", 1e-5)
        self.theta = c.get("rope_theta", 10000.0)
        self.tied = c.get("tie_word_embeddings", False)
        self.vocab = c["vocab_size"]
        self.intermediate = c["intermediate_size"]


def rms(x, w, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat([-x[..., h:], x[..., :h]], -1)


class Model:
    def __init__(self, cfg, params):
        self.cfg = cfg
        self.p = params

    def logits(self, ids):
        """ids: (b, s) long, no padding. Returns (b, s, vocab)."""
        c, p = self.cfg, self.p
        b, s = ids.shape
        x = p["model.embed_tokens.weight"][ids]
        dt = x.dtype
        inv = 1.0 / (c.theta ** (torch.arange(0, c.head_dim, 2, dtype=torch.float64) / c.head_dim))
        pos = torch.arange(s, dtype=torch.float64)
        f = torch.outer(pos, inv)
        emb = torch.cat([f, f], -1)
        cos, sin = emb.cos().to(dt), emb.sin().to(dt)
        causal = torch.full((s, s), float("-inf"), dtype=dt).triu(1)
        g = c.heads // c.kv_heads
        for i in range(c.layers):
            L = lambda n: p.get(f"model.layers.{i}.{n}")
            h = rms(x, L("input_layernorm.weight"), c.eps)

            def proj(name, heads):
                y = h @ L(f"self_attn.{name}.weight").T
                bias = L(f"self_attn.{name}.bias")
                if bias is not None:
                    y = y + bias
                return y.reshape(b, s, heads, c.head_dim)

            q, k, v = proj("q_proj", c.heads), proj("k_proj", c.kv_heads), proj("v_proj", c.kv_heads)
            if L("self_attn.q_norm.weight") is not None:
                q = rms(q, L("self_attn.q_norm.weight"), c.eps)
                k = rms(k, L("self_attn.k_norm.weight"), c.eps)
            q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            k = k.repeat_interleave(g, dim=1)
            v = v.repeat_interleave(g, dim=1)
            att = (q @ k.transpose(-1, -2)) / math.sqrt(c.head_dim) + causal
            y = torch.softmax(att, -1) @ v
            y = y.transpose(1, 2).reshape(b, s, c.heads * c.head_dim)
            o = y @ L("self_attn.o_proj.weight").T
            if L("self_attn.o_proj.bias") is not None:
                o = o + L("self_attn.o_proj.bias")
            x = x + o
            h = rms(x, L("post_attention_layernorm.weight"), c.eps)
            gate = torch.nn.functional.silu(h @ L("mlp.gate_proj.weight").T)
            x = x + (gate * (h @ L("mlp.up_proj.weight").T)) @ L("mlp.down_proj.weight").T
        x = rms(x, p["model.norm.weight"], c.eps)
        head = p["model.embed_tokens.weight"] if c.tied or "lm_head.weight" not in p else p["lm_head.weight"]
        return x @ head.T

    def token_logprobs(self, ids, temperature):
        """(b, s) log-probs aligned with the tokens, 0 at position 0."""
        t = 1.0 if temperature == 0 else float(temperature)
        lg = self.logits(ids)[:, :-1] / t
        lp = torch.log_softmax(lg, -1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
        return torch.cat([torch.zeros_like(lp[:, :1]), lp], 1)


def load_model(folder, dtype):
    cfg = Config(json.load(open(f"{folder}/config.json")))
    params = {k: v.to(dtype) for k, v in read_safetensors(f"{folder}/model.safetensors").items()}
    return Model(cfg, params)


def advantages(samples, cfg):
    """Per role: agent (r - mean)/(pop std + 1e-8) per group; designer centred (or as configured)."""
    out = [None] * len(samples)
    for role, norm, scale in [("agent", cfg.get("agent_norm", "std"), 1.0),
                              ("designer", cfg.get("designer_norm", "center"), cfg.get("designer_scale", 1.0))]:
        groups = {}
        for i, s in enumerate(samples):
            if s["role"] == role:
                groups.setdefault(s["group"], []).append(i)
        for idx in groups.values():
            r = torch.tensor([samples[i]["reward"] for i in idx], dtype=torch.float64)
            if norm == "none":
                for j, i in enumerate(idx):
                    out[i] = float(r[j]) * scale
                continue
            if bool((r == r[0]).all()):
                continue
            mean = r.mean()
            std = ((r - mean) ** 2).mean().sqrt()
            a = (r - mean) if norm == "center" else (r - mean) / (std + 1e-8)
            for j, i in enumerate(idx):
                out[i] = float(a[j]) * scale
    return out


def mb_loss(model, samples, old, ref, cfg, dr_norm):
    """Loss of one mini-batch (list of (sample, advantage, index))."""
    n = len(samples)
    total_tokens = sum(sum(s["mask"][1:]) for s, _, _ in samples)
    loss = 0.0
    for s, adv, i in samples:
        ids = torch.tensor([s["tokens"]], dtype=torch.long)
        lp = model.token_logprobs(ids, s["temperature"])[0]
        o = old[i] if old is not None else lp.detach()
        mask = torch.tensor(s["mask"], dtype=lp.dtype)
        mask[0] = 0
        beh = torch.tensor(s["behaviour"], dtype=lp.dtype)
        ratio = torch.exp(lp - o)
        pg1 = -adv * ratio
        pg2 = -adv * torch.clamp(ratio, 1 - cfg["eps_low"], 1 + cfg["eps_high"])
        pg = torch.maximum(pg1, pg2)
        if cfg.get("dual_clip") is not None and adv < 0:
            pg = torch.minimum(pg, torch.full_like(pg, -adv * cfg["dual_clip"]))
        w = torch.clamp(torch.exp(o - beh), max=cfg["tis_cap"]).detach()
        tok = pg * w
        if ref is not None and cfg["kl_coef"] != 0:
            with torch.no_grad():
                r = ref.token_logprobs(ids, s["temperature"])[0]
            x = r - lp
            tok = tok + cfg["kl_coef"] * (torch.exp(x) - x - 1)
        k = float(mask.sum())
        agg = cfg["loss_agg"]
        if agg == "seq-mean-token-mean":
            loss = loss + (tok * mask).sum() / max(k, 1.0) / n
        elif agg == "token-mean":
            loss = loss + (tok * mask).sum() / max(total_tokens, 1)
        elif agg == "dr-grpo":
            loss = loss + (tok * mask).sum() / (dr_norm * n)
        else:
            raise SystemExit(f"unknown loss_agg {agg}")
    return loss


def cmd_step(a):
    torch.set_num_threads(a.threads)
    dtype = torch.float64
    model = load_model(a.model, dtype)
    ref = load_model(a.ref_model, dtype) if a.ref_model else None
    samples = json.load(open(a.batch))
    cfg = json.load(open(a.config))
    adv = advantages(samples, cfg)
    kept = [(s, adv[i], i) for i, s in enumerate(samples) if adv[i] is not None]
    names = sorted(model.p)
    for k in names:
        model.p[k].requires_grad_(True)
    params = [model.p[k] for k in names]
    opt = torch.optim.AdamW(params, lr=cfg["lr"], betas=(cfg["beta1"], cfg["beta2"]), eps=cfg["adam_eps"],
                            weight_decay=cfg["weight_decay"])
    dr_norm = max([sum(s["mask"][1:]) for s, _, _ in kept] + [1])
    m = max(1, min(cfg.get("mini_batches", 1), len(kept)))
    old = None
    if m > 1:
        with torch.no_grad():
            old = {i: model.token_logprobs(torch.tensor([s["tokens"]]), s["temperature"])[0] for s, _, i in kept}
    first = None
    for k in range(m):
        part = [x for j, x in enumerate(kept) if j % m == k]
        opt.zero_grad()
        loss = mb_loss(model, part, old, ref, cfg, dr_norm)
        loss.backward()
        if first is None:
            first = {"loss": float(loss), "grads": {n: p.grad.flatten().tolist() for n, p in zip(names, params)}}
            first["grad_norm"] = float(torch.sqrt(sum((p.grad ** 2).sum() for p in params)))
        if cfg["max_grad_norm"] > 0:
            torch.nn.utils.clip_grad_norm_(params, cfg["max_grad_norm"])
        opt.step()
    out = {"advantages": adv, "kept": [i for _, _, i in kept], **first,
           "weights_after": {n: p.detach().flatten().tolist() for n, p in zip(names, params)}}
    json.dump(out, open(a.out, "w"))


SMOLLM2_135M = {"hidden_size": 576, "num_hidden_layers": 30, "num_attention_heads": 9, "num_key_value_heads": 3,
                "intermediate_size": 1536, "vocab_size": 49152, "rms_norm_eps": 1e-5, "rope_theta": 100000.0,
                "tie_word_embeddings": True}


def random_params(cfg, seed):
    g = torch.Generator().manual_seed(seed)
    h, hd, ff = cfg.hidden, cfg.head_dim, cfg.intermediate
    shapes = {"model.embed_tokens.weight": (cfg.vocab, h), "model.norm.weight": (h,)}
    for i in range(cfg.layers):
        n = lambda s: f"model.layers.{i}.{s}"
        shapes.update({n("input_layernorm.weight"): (h,), n("post_attention_layernorm.weight"): (h,),
                       n("self_attn.q_proj.weight"): (cfg.heads * hd, h), n("self_attn.k_proj.weight"): (cfg.kv_heads * hd, h),
                       n("self_attn.v_proj.weight"): (cfg.kv_heads * hd, h), n("self_attn.o_proj.weight"): (h, cfg.heads * hd),
                       n("mlp.gate_proj.weight"): (ff, h), n("mlp.up_proj.weight"): (ff, h), n("mlp.down_proj.weight"): (h, ff)})
    out = {}
    for k, s in sorted(shapes.items()):
        out[k] = (torch.ones(s) if k.endswith("norm.weight") else torch.randn(s, generator=g) * 0.02).requires_grad_(True)
    return out


def bench_one(a):
    torch.set_num_threads(a.threads)
    cfg = Config(json.load(open(a.model_config)) if a.model_config else SMOLLM2_135M)
    params = random_params(cfg, 0)
    model = Model(cfg, params)
    plist = list(params.values())
    opt = torch.optim.AdamW(plist, lr=1e-6, betas=(0.9, 0.98), weight_decay=0.1)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, cfg.vocab, (a.seqs, a.tokens), generator=g)
    coef = torch.randn(a.seqs, a.tokens, generator=g) / (a.seqs * a.tokens)
    fwd = bwd = 0.0
    t_all = time.perf_counter()
    ru = resource.getrusage(resource.RUSAGE_SELF)
    cpu0 = ru.ru_utime + ru.ru_stime
    for start in range(0, a.seqs, a.micro_batch):
        t0 = time.perf_counter()
        lp = model.token_logprobs(ids[start : start + a.micro_batch], 1.0)
        loss = (lp * coef[start : start + a.micro_batch]).sum()
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        fwd += t1 - t0
        bwd += t2 - t1
    t0 = time.perf_counter()
    torch.nn.utils.clip_grad_norm_(plist, 1.0)
    opt.step()
    optim = time.perf_counter() - t0
    total = time.perf_counter() - t_all
    ru = resource.getrusage(resource.RUSAGE_SELF)
    cpu = ru.ru_utime + ru.ru_stime - cpu0
    print(json.dumps({"micro_batch": a.micro_batch, "seqs": a.seqs, "tokens": a.tokens, "threads": a.threads,
                      "cpu_s": cpu, "cores": cpu / total,
                      "forward_s": fwd, "backward_s": bwd, "optimizer_s": optim, "step_s": total,
                      "tokens_per_s": a.seqs * a.tokens / total,
                      "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                      "torch": torch.__version__}))


def cmd_bench(a):
    if a.one:
        return bench_one(a)
    rows = []
    for mb in a.micro_batches:
        cmd = [sys.executable, __file__, "bench", "--one", "--micro-batch", str(mb), "--seqs", str(a.seqs),
               "--tokens", str(a.tokens), "--threads", str(a.threads)]
        if a.model_config:
            cmd += ["--model-config", a.model_config]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise SystemExit(f"bench micro-batch {mb} failed: {res.stderr.strip().splitlines()[-1:]}")
        rows.append(json.loads(res.stdout.strip().splitlines()[-1]))
    print(json.dumps(rows))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("step", help="agreement: advantages, loss, gradients, weights after one step")
    s.add_argument("--model", required=True)
    s.add_argument("--ref-model")
    s.add_argument("--batch", required=True)
    s.add_argument("--config", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--threads", type=int, default=1)
    b = sub.add_parser("bench", help="timing of one step on a SmolLM2-135M-shaped model")
    b.add_argument("--seqs", type=int, default=16)
    b.add_argument("--tokens", type=int, default=512)
    b.add_argument("--micro-batches", type=int, nargs="+", default=[1, 2, 4])
    b.add_argument("--micro-batch", type=int, default=1)
    b.add_argument("--threads", type=int, default=1)
    b.add_argument("--model-config", help="config.json of the shape (default: SmolLM2-135M)")
    b.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    {"step": cmd_step, "bench": cmd_bench}[a.cmd](a)


if __name__ == "__main__":
    main()
