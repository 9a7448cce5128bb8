//! FSDP bench (`make bench-fsdp`): one GRPO step on the default model (SmolLM2-135M) over the same
//! agent batch (16 episodes of 512 tokens, the second half trained, groups of 4 with reward
//! variance), by `spade-grpo-step` itself, and with its update on PyTorch FSDP
//! (`--trainer`, scripts/grpo_step_fsdp.py) in one process and in two (torchrun, gloo); wall
//! time, the update's own time and peak memory of each, in the same run. Writes
//! `target/bench/fsdp.json`.
//!
//! Environment: `SPADE_TORCH_PYTHON` (default: `.cache/torch-venv/bin/python`, made by
//! scripts/torch-venv.sh), `SPADE_THREADS` (2: the candle step and the one FSDP process use 2
//! threads, each of the two FSDP processes 1), `SPADE_BENCH_QUICK=1` (8 episodes of 256 tokens).

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::json;

fn main() {
    let quick = std::env::var_os("SPADE_BENCH_QUICK").is_some();
    let (episodes, len) = if quick { (8, 256) } else { (16, 512) };
    let threads: usize = std::env::var("SPADE_THREADS").ok().and_then(|t| t.parse().ok()).unwrap_or(2);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let py = std::env::var_os("SPADE_TORCH_PYTHON").map(PathBuf::from).unwrap_or_else(|| root.join(".cache/torch-venv/bin/python"));
    assert!(py.exists(), "{}: missing (scripts/torch-venv.sh makes it; make bench-fsdp does)", py.display());
    let model = spade_model::default_model_path();
    let dir = tempfile::tempdir().unwrap();
    // The batch: random tokens of the vocabulary, behaviour log-probs around the model's.
    let mut x: u64 = 0x5eed;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let rollouts = dir.path().join("rollouts.jsonl");
    let rows: Vec<String> = (0..episodes)
        .map(|e| {
            let tokens: Vec<u32> = (0..len).map(|_| (next() % 49_000) as u32 + 100).collect();
            let mask: Vec<u8> = (0..len).map(|t| u8::from(t >= len / 2)).collect();
            let lps: Vec<f32> = mask.iter().map(|&m| if m == 1 { -8.0 - (next() % 100) as f32 / 50.0 } else { 0.0 }).collect();
            let ret = [1.0, 0.0, 0.5, 0.0][e % 4];
            json!({
                "env_id": format!("env-{}", e / 4), "arm": "nohint", "episode": e % 4, "return": ret,
                "status": "ok", "token_ids": tokens, "loss_mask": mask, "logprobs": lps, "temperature": 1.0, "policy_version": 0,
            })
            .to_string()
        })
        .collect();
    std::fs::write(&rollouts, rows.join("\n") + "\n").unwrap();
    let script = root.join("scripts/grpo_step_fsdp.py");
    let runs = [
        ("candle", threads, None),
        ("fsdp-1", threads, Some(format!("{} {}", py.display(), script.display()))),
        (
            "fsdp-2",
            (threads / 2).max(1),
            Some(format!("{} -m torch.distributed.run --standalone --nproc-per-node 2 {}", py.display(), script.display())),
        ),
    ];
    let mut out = serde_json::Map::new();
    for (name, t, trainer) in runs {
        let metrics = dir.path().join(format!("{name}.jsonl"));
        let mut c = Command::new(env!("CARGO_BIN_EXE_spade-grpo-step"));
        c.arg("--model").arg(&model).arg("--rollouts").arg(&rollouts).arg("-o").arg(dir.path().join(name));
        c.args(["--threads", &t.to_string(), "--micro-batch", "1", "--lr", "1e-6", "--quiet", "--metrics", metrics.to_str().unwrap()]);
        if let Some(tr) = &trainer {
            c.args(["--trainer", tr]);
        }
        let t0 = Instant::now();
        let o = c.output().expect("spade-grpo-step");
        let wall = t0.elapsed().as_secs_f64();
        assert!(o.status.success(), "{name} failed: {}", String::from_utf8_lossy(&o.stderr));
        let line: serde_json::Value = serde_json::from_str(std::fs::read_to_string(&metrics).unwrap().lines().last().unwrap()).unwrap();
        let m = &line["metrics"];
        let step = m["time"]["total"].as_f64().unwrap();
        let tokens = m["agent"]["tokens"].as_u64().unwrap();
        let per_rank = m["trainer"]["peak_rss_mib_per_rank"].clone();
        eprintln!("{name}: step {step:.1} s, wall {wall:.1} s, peak RSS {} MiB (per rank {per_rank})", m["peak_rss_mib"]);
        out.insert(
            name.into(),
            json!({
                "threads_per_process": t, "wall_s": wall, "step_s": step, "trained_tokens": tokens,
                "tokens_per_s": (episodes * len) as f64 / step,
                "peak_rss_mib": m["peak_rss_mib"], "peak_rss_mib_per_rank": per_rank,
                "loss": m["loss"], "grad_norm": m["grad_norm"],
            }),
        );
    }
    let ratio = |a: &str| out[a]["step_s"].as_f64().unwrap() / out["candle"]["step_s"].as_f64().unwrap();
    let report = json!({
        "model": model.display().to_string(), "episodes": episodes, "tokens_per_episode": len, "threads": threads,
        "quick": quick, "runs": out.clone(),
        "fsdp_1_step_time_vs_candle": ratio("fsdp-1"), "fsdp_2_step_time_vs_candle": ratio("fsdp-2"),
    });
    let dest = root.join("target/bench");
    std::fs::create_dir_all(&dest).unwrap();
    let text = serde_json::to_string_pretty(&report).unwrap();
    std::fs::write(dest.join("fsdp.json"), &text).unwrap();
    println!("{text}");
}
