#!/usr/bin/env python3
"""spade's GRPO update on PyTorch FSDP: the training half of `spade-grpo-step --trainer`.

    spade-grpo-step --trainer 'torchrun --nproc-per-node 2 scripts/grpo_step_fsdp.py' ...
    spade-grpo-step --trainer 'srun torchrun --nnodes 4 --nproc-per-node 8 --rdzv-backend c10d \
        --rdzv-endpoint $HEAD:29500 scripts/grpo_step_fsdp.py' ...

spade-grpo-step reads the tables, computes the advantages, the micro- and mini-batches and each
sample's aggregation weight (the same code as its own trainer), and runs this program with
`--plan FILE` (see crates/spade-train/src/external.rs for the file). Every rank (one process per
device; without torchrun, one process) loads the model with Hugging Face transformers (any model it
loads: Llama, Qwen2/2.5/3, Gemma, ...), shards parameters, gradients and optimizer state with FSDP
(bf16 mixed precision on GPUs with float32 reduction, float32 on CPU; gradient checkpointing on,
as spade's blockwise backward), and takes the update spade's trainer takes:

- per token: ratio exp(lp - old), PPO clip [1 - eps_low, 1 + eps_high] (optional dual clip),
  truncated importance weight min(exp(old - behaviour), C), k3 KL to the reference; the
  derivative of the token's loss with respect to its log-prob, times the sample's aggregation
  weight, is back-propagated through the model's forward (as spade does);
- micro-batches are spread over the ranks (the designer's first, then the agent's), gradients
  summed over ranks; per-role gradient norms as spade reports them; global-norm clipping; AdamW
  (torch.optim.AdamW: spade's AdamW is checked against it); with several mini-batches the old
  log-probs come from the start weights.

Rank 0 writes model.safetensors (float32, Hugging Face names), optimizer.safetensors (the AdamW
moments, spade's names) and copies the model's other files into the plan's output folder, and the
metrics into the plan's metrics file; spade-grpo-step writes the trainer state and the card and
renames the folder into place. A spade checkpoint's optimizer state is resumed (either trainer's).
"""

import argparse
import datetime
import json
import os
import resource
import shutil
import socket
import time

import torch
import torch.distributed as dist


def log(*a):
    if int(os.environ.get("RANK", "0")) == 0:
        print("grpo_step_fsdp:", *a, flush=True)


def init_distributed(device_kind):
    """The process group: torchrun's, or a group of one."""
    if "WORLD_SIZE" not in os.environ:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK="0", WORLD_SIZE="1", LOCAL_RANK="0")
    backend = "nccl" if device_kind == "cuda" else "gloo"
    dist.init_process_group(backend=backend, timeout=datetime.timedelta(minutes=30))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if device_kind == "cuda":
        torch.cuda.set_device(local)
        return torch.device("cuda", local)
    return torch.device("cpu")


def load(folder, device):
    from transformers import AutoModelForCausalLM

    m = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32, attn_implementation="eager")
    m.config.use_cache = False
    return m


def wrap(model, device, train):
    """FSDP over the decoder layers (one unit each) and the rest (embeddings, head, norm)."""
    import functools

    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
    from torch.distributed.fsdp import MixedPrecision
    from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy

    layer = type(model.model.layers[0])
    if train:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    mp = None
    if device.type == "cuda":
        mp = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32, buffer_dtype=torch.bfloat16)
    return FSDP(
        model,
        auto_wrap_policy=functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={layer}),
        mixed_precision=mp,
        device_id=device,  # torch.device("cpu"): FSDP on CPU (gloo)
        use_orig_params=True,
        limit_all_gathers=True,
    )


def token_logprobs(model, seqs, temperature, device):
    """(b, s) log-probs of each token given the ones before it (0 at position 0; rows padded)."""
    n = max(len(q) for q in seqs)
    ids = torch.zeros(len(seqs), n, dtype=torch.long)
    att = torch.zeros(len(seqs), n, dtype=torch.long)
    for r, q in enumerate(seqs):
        ids[r, : len(q)] = torch.tensor(q, dtype=torch.long)
        att[r, : len(q)] = 1
    ids, att = ids.to(device), att.to(device)
    logits = model(input_ids=ids, attention_mask=att).logits.float()
    t = 1.0 if temperature == 0 else float(temperature)
    lp = torch.log_softmax(logits[:, :-1] / t, -1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    return torch.cat([torch.zeros_like(lp[:, :1]), lp], 1)


def token_terms(obj, lp, old, beh, adv, ref):
    """spade's objective (crates/spade-train/src/objective.rs), elementwise in float64:
    loss, dloss/dlp, clipped, tis, tis_capped, kl."""
    ratio = torch.exp(lp - old)
    clipped_ratio = ratio.clamp(1.0 - obj["eps_low"], 1.0 + obj["eps_high"])
    pg1, pg2 = -adv * ratio, -adv * clipped_ratio
    clipped = pg2 > pg1
    pg = torch.where(clipped, pg2, pg1)
    grad = torch.where(clipped, torch.zeros_like(pg1), -adv * ratio)
    if obj.get("dual_clip") is not None and adv < 0:
        c = obj["dual_clip"]
        over = pg > -adv * c
        pg = torch.where(over, torch.full_like(pg, -adv * c), pg)
        grad = torch.where(over, torch.zeros_like(grad), grad)
        clipped = clipped | over
    raw_w = torch.exp(old - beh)
    tis = raw_w.clamp(max=obj["tis_cap"])
    pg, grad = pg * tis, grad * tis
    loss = pg
    kl = torch.zeros_like(lp)
    if ref is not None:
        x = ref - lp
        kl = torch.exp(x) - x - 1.0
        loss = loss + obj["kl_coef"] * kl
        grad = grad + obj["kl_coef"] * (1.0 - torch.exp(x))
    return loss, grad, clipped, tis, raw_w > obj["tis_cap"], kl


def spread(mbs, world, rank):
    """This rank's micro-batches of a list (round-robin), padded with None so every rank runs as
    many forward/backward passes (FSDP's collectives need all ranks in each)."""
    mine = mbs[rank::world]
    per = -(-len(mbs) // world)
    return mine + [None] * (per - len(mine))


def grad_norm(model):
    """The global 2-norm of the (sharded) gradients: a collective."""
    return float(model.clip_grad_norm_(float("inf")))


def new_role():
    return {"loss": 0.0, "tokens": 0, "samples": 0, "grad_norm": 0.0, "n_clipped": 0, "n_capped": 0, "tis_sum": 0.0,
            "tis_min": None, "tis_max": 0.0, "kl_sum": 0.0, "adv_abs_sum": 0.0}


def merge(parts):
    out = {"agent": new_role(), "designer": new_role()}
    for p in parts:
        for role in out:
            a, b = out[role], p[role]
            for k in ("loss", "tokens", "samples", "n_clipped", "n_capped", "tis_sum", "kl_sum", "adv_abs_sum"):
                a[k] += b[k]
            a["tis_max"] = max(a["tis_max"], b["tis_max"])
            if b["tis_min"] is not None:
                a["tis_min"] = b["tis_min"] if a["tis_min"] is None else min(a["tis_min"], b["tis_min"])
    return out


def finish(r):
    n = max(r["tokens"], 1)
    return {"loss": r["loss"], "tokens": r["tokens"], "samples": r["samples"], "grad_norm": r["grad_norm"],
            "clip_frac": r["n_clipped"] / n, "tis_capped_frac": r["n_capped"] / n, "tis_mean": r["tis_sum"] / n,
            "tis_min": r["tis_min"] if r["tokens"] else 0.0, "tis_max": r["tis_max"] if r["tokens"] else 0.0,
            "kl": r["kl_sum"] / n, "adv_mean_abs": r["adv_abs_sum"] / max(r["samples"], 1)}


def read_safetensors(path):
    from safetensors.torch import load_file

    return load_file(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--plan", required=True, help="the plan file spade-grpo-step --trainer writes")
    a = ap.parse_args()
    plan = json.load(open(a.plan))
    if plan.get("format") != 1:
        raise SystemExit(f"{a.plan}: plan format {plan.get('format')} (this program reads 1)")
    t_start = time.perf_counter()
    kind = "cuda" if plan["device"] == "cuda" and torch.cuda.is_available() else "cpu"
    if plan["device"] == "cuda" and kind != "cuda":
        raise SystemExit("grpo_step_fsdp: --device cuda but torch sees no GPU")
    if plan.get("threads"):
        torch.set_num_threads(int(plan["threads"]))
    device = init_distributed(kind)
    rank, world = dist.get_rank(), dist.get_world_size()
    cfg, obj = plan["config"], plan["config"]["objective"]
    samples, weights = plan["samples"], plan["weights"]
    log(f"{len(samples)} samples, {sum(len(m) for m in plan['mini_batches'])} micro-batches over {world} rank(s) on {kind}")

    hf = load(plan["model"], device)
    names = [n for n, _ in hf.named_parameters()]
    tied = bool(getattr(hf.config, "tie_word_embeddings", False))
    model = wrap(hf, device, train=True)
    ref = None
    if plan.get("reference") and obj["kl_coef"] != 0:
        ref = wrap(load(plan["reference"], device), device, train=False)
        ref.eval()
    adamw = cfg["adamw"]
    opt = torch.optim.AdamW(model.parameters(), lr=adamw["lr"], betas=(adamw["beta1"], adamw["beta2"]), eps=adamw["eps"],
                            weight_decay=adamw["weight_decay"])
    from torch.distributed.checkpoint.state_dict import (StateDictOptions, get_model_state_dict,
                                                         get_optimizer_state_dict, set_optimizer_state_dict)

    steps0 = int(plan["state"]["optimizer_steps"])
    opt_file = os.path.join(plan["model"], "optimizer.safetensors")
    # The start's AdamW moments (read once: resumed here, and kept as they are by a step with
    # nothing to train).
    prev_moments = {}
    if steps0 > 0:
        if not os.path.exists(opt_file):
            raise SystemExit(f"{plan['model']}: trainer state records {steps0} optimizer steps but the folder has no optimizer.safetensors")
        prev_moments = read_safetensors(opt_file)
        state = {}
        for n in names:
            if f"exp_avg.{n}" not in prev_moments:
                raise SystemExit(f"{opt_file}: no moments for parameter {n}")
            state[n] = {"step": torch.tensor(float(steps0)), "exp_avg": prev_moments[f"exp_avg.{n}"],
                        "exp_avg_sq": prev_moments[f"exp_avg_sq.{n}"]}
        groups = [{**{k: v for k, v in opt.param_groups[0].items() if k != "params"}, "params": names}]
        set_optimizer_state_dict(model, opt, {"state": state, "param_groups": groups}, options=StateDictOptions(full_state_dict=True))

    timing = {"old_logprobs": 0.0, "reference": 0.0, "forward": 0.0, "backward": 0.0, "optimizer": 0.0}
    n_mini = len(plan["mini_batches"])
    old = {}
    if n_mini > 1:
        # The log-probs under the start weights, every sample's, before any update.
        t0 = time.perf_counter()
        allmb = [mb for mini in plan["mini_batches"] for mb in mini]
        mine = {}
        with torch.no_grad():
            for mb in spread(allmb, world, rank):
                seqs = [samples[i]["tokens"] for i in mb] if mb else [[0, 0]]
                lp = token_logprobs(model, seqs, samples[mb[0]]["temperature"] if mb else 1.0, device).double().cpu()
                for r, i in enumerate(mb or []):
                    mine[i] = lp[r, : len(samples[i]["tokens"])]
        gathered = [None] * world
        dist.all_gather_object(gathered, mine)
        for g in gathered:
            old.update(g)
        timing["old_logprobs"] = time.perf_counter() - t0

    stats = {"agent": new_role(), "designer": new_role()}
    loss_total, norms, clip_factor, micro = 0.0, [], 1.0, 0
    for mini in plan["mini_batches"]:
        opt.zero_grad(set_to_none=False)
        segments = [[mb for mb in mini if samples[mb[0]]["role"] == role] for role in ("designer", "agent")]
        for role, segment in zip(("designer", "agent"), segments):
            if not segment:
                continue
            rs = stats[role]
            for mb in spread(segment, world, rank):
                t0 = time.perf_counter()
                seqs = [samples[i]["tokens"] for i in mb] if mb else [[0, 0]]
                temp = samples[mb[0]]["temperature"] if mb else 1.0
                lp = token_logprobs(model, seqs, temp, device)
                timing["forward"] += time.perf_counter() - t0
                refv = None
                if ref is not None:
                    t0 = time.perf_counter()
                    with torch.no_grad():
                        refv = token_logprobs(ref, seqs, temp, device).double().cpu()
                    timing["reference"] += time.perf_counter() - t0
                coef = torch.zeros(lp.shape, dtype=torch.float64)
                cur_all = lp.detach().double().cpu()
                for r, i in enumerate(mb or []):
                    s = samples[i]
                    n = len(s["tokens"])
                    mask = torch.tensor(s["mask"], dtype=torch.bool)
                    mask[0] = False
                    cur = cur_all[r, :n]
                    o = old[i] if n_mini > 1 else cur
                    beh = torch.tensor(s["behaviour"], dtype=torch.float64)
                    loss, grad, clipped, tis, capped, kl = token_terms(obj, cur, o, beh, float(s["advantage"]),
                                                                        refv[r, :n] if refv is not None else None)
                    w = float(weights[i])
                    coef[r, :n] = torch.where(mask, w * grad, torch.zeros_like(grad))
                    contrib = float((w * loss)[mask].sum())
                    loss_total += contrib / n_mini
                    rs["loss"] += contrib / n_mini
                    k = int(mask.sum())
                    rs["tokens"] += k
                    rs["n_clipped"] += int(clipped[mask].sum())
                    rs["n_capped"] += int(capped[mask].sum())
                    rs["tis_sum"] += float(tis[mask].sum())
                    if k:
                        lo = float(tis[mask].min())
                        rs["tis_min"] = lo if rs["tis_min"] is None else min(rs["tis_min"], lo)
                        rs["tis_max"] = max(rs["tis_max"], float(tis[mask].max()))
                    rs["kl_sum"] += float(kl[mask].sum())
                    rs["samples"] += 1
                    rs["adv_abs_sum"] += abs(float(s["advantage"]))
                micro += 1 if mb else 0
                t0 = time.perf_counter()
                # FSDP averages gradients over ranks; the plan's weights make the loss a sum.
                (lp * coef.to(lp.dtype).to(device)).sum().mul(world).backward()
                timing["backward"] += time.perf_counter() - t0
            # spade's per-role norms: the designer's part (its micro-batches come first), and the
            # agent's when the mini-batch has no designer samples.
            if role == "designer" or not segments[0]:
                stats[role]["grad_norm"] += grad_norm(model)
        t0 = time.perf_counter()
        mx = float(adamw["max_grad_norm"])
        norm = float(model.clip_grad_norm_(mx)) if mx > 0 else grad_norm(model)
        factor = min(mx / (norm + 1e-6), 1.0) if mx > 0 else 1.0
        opt.step()
        timing["optimizer"] += time.perf_counter() - t0
        norms.append(norm)
        clip_factor = min(clip_factor, factor)

    parts = [None] * world
    dist.all_gather_object(parts, {"agent": stats["agent"], "designer": stats["designer"], "loss": loss_total,
                                   "micro": micro, "timing": timing,
                                   "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0})
    t0 = time.perf_counter()
    opts = StateDictOptions(full_state_dict=True, cpu_offload=device.type == "cuda")
    weights_sd = get_model_state_dict(model, options=opts)
    optim_sd = get_optimizer_state_dict(model, opt, options=opts) if n_mini else None
    if rank == 0:
        from safetensors.torch import save_file

        out = plan["output"]
        os.makedirs(out, exist_ok=True)
        tensors = {k: v.detach().to(torch.float32).contiguous() for k, v in weights_sd.items() if not (tied and k == "lm_head.weight")}
        save_file(tensors, os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
        moments = {}
        for n in names:
            st = (optim_sd or {}).get("state", {}).get(n)
            if st is None:  # no update (nothing to train): the moments stay as they were
                for k in (f"exp_avg.{n}", f"exp_avg_sq.{n}"):  # distinct tensors: safetensors refuses shared ones
                    moments[k] = prev_moments[k] if k in prev_moments else torch.zeros(weights_sd[n].shape, dtype=torch.float32)
                continue
            moments[f"exp_avg.{n}"] = st["exp_avg"].to(torch.float32).contiguous()
            moments[f"exp_avg_sq.{n}"] = st["exp_avg_sq"].to(torch.float32).contiguous()
        save_file(moments, os.path.join(out, "optimizer.safetensors"))
        for f in os.listdir(plan["model"]):
            if f.endswith((".json", ".model", ".txt", ".jinja")) and f not in ("trainer_state.json",) and not f.startswith("."):
                shutil.copyfile(os.path.join(plan["model"], f), os.path.join(out, f))
        save_s = time.perf_counter() - t0
        merged = merge(parts)
        for role in ("agent", "designer"):  # the norms are global: every rank holds them
            merged[role]["grad_norm"] = stats[role]["grad_norm"] / max(n_mini, 1)
        tsum = {k: max(p["timing"][k] for p in parts) for k in timing}
        metrics = {
            "trained": n_mini > 0, "loss": sum(p["loss"] for p in parts),
            "agent": finish(merged["agent"]), "designer": finish(merged["designer"]),
            "grad_norm": sum(norms) / len(norms) if norms else 0.0, "grad_norm_max": max(norms, default=0.0),
            "grad_clip_factor": clip_factor, "optimizer_steps": steps0 + n_mini,
            "micro_batches": sum(p["micro"] for p in parts),
            "time": {**tsum, "total": time.perf_counter() - t_start - save_s, "save": save_s},
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
            "trainer": {"engine": "fsdp", "world_size": world, "device": kind, "torch": torch.__version__,
                        "peak_rss_mib_per_rank": [p["peak_rss_mib"] for p in parts]},
        }
        with open(plan["metrics"], "w") as f:
            json.dump(metrics, f)
        log(f"step done: loss {metrics['loss']:.6g}, grad norm {metrics['grad_norm']:.6g}, {metrics['optimizer_steps']} optimizer steps")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
