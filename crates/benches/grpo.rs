//! `make bench`: one GRPO step (`spade_train::Trainer::step`, what `spade-grpo-step` runs) on the
//! default model, N sequences × L tokens, at several micro-batch sizes — seconds of forward,
//! backward and optimizer, tokens/s and peak RSS, each size in a fresh process — beside the
//! PyTorch peer (scripts/torch_grpo_ref.py bench: the same model shape and batch) in the same run.
//! Writes `target/bench/grpo.json`.
//!
//! Sizes from the environment: `SPADE_BENCH_GRPO_SEQS` (16), `SPADE_BENCH_GRPO_TOKENS` (512),
//! `SPADE_BENCH_GRPO_MB` (`1,2,4`), `SPADE_BENCH_THREADS` (1; candle and torch alike),
//! `SPADE_BENCH_CHECKPOINTING` (1: the blockwise backward with the default
//! `--keep-activations`; 0: candle's autograd over the whole graph). The peer
//! runs with `OPENBLAS_CORETYPE`/`OPENBLAS_L2_SIZE` unset (DESIGN: with libopenblas0-pthread
//! installed, torch then uses the optimised OpenBLAS kernels) and `OPENBLAS_NUM_THREADS` /
//! `OMP_NUM_THREADS` set to the thread count; `SPADE_BENCH_NO_PEER=1` skips it. Every row records
//! `cores`: CPU seconds of the step over its wall seconds.

use std::path::PathBuf;
use std::process::Command;

use spade_model::candle_core::Device;
use spade_train::{AdamW, Role, Sample, StepConfig, Trainer};

fn env_usize(k: &str, d: usize) -> usize {
    std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d)
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// CPU seconds (user + system, all threads) this process has used.
fn cpu_s() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    let u = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// One step at one micro-batch size, in this process; prints one JSON line.
fn one(mb: usize, seqs: usize, tokens: usize) {
    let path = spade_model::default_model_path();
    let t0 = std::time::Instant::now();
    let mut trainer = Trainer::open(&path, &Device::Cpu).unwrap_or_else(|e| panic!("{}: {e:#} (run scripts/fetch-model.sh)", path.display()));
    let load_s = t0.elapsed().as_secs_f64();
    let vocab = trainer.model.config().vocab_size as u64;
    let mut x = 0x9e3779b97f4a7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let samples: Vec<Sample> = (0..seqs)
        .map(|i| Sample {
            role: Role::Agent,
            tokens: (0..tokens).map(|_| (next() % vocab) as u32).collect(),
            mask: vec![1; tokens],
            behaviour: vec![-10.0; tokens],
            temperature: 1.0,
            reward: 0.0,
            group: "g".into(),
            advantage: if i % 2 == 0 { 1.0 } else { -1.0 },
            policy_version: Some(0),
        })
        .collect();
    let checkpointing = std::env::var("SPADE_BENCH_CHECKPOINTING").map(|v| v != "0").unwrap_or(true);
    let cfg = StepConfig { adamw: AdamW::default(), micro_batch: mb, checkpointing, ..Default::default() };
    let cpu0 = cpu_s();
    let m = trainer.step(&samples, &cfg, None).unwrap();
    let cpu = cpu_s() - cpu0;
    let n = (seqs * tokens) as f64;
    println!(
        "{}",
        serde_json::json!({
            "micro_batch": mb, "seqs": seqs, "tokens": tokens, "checkpointing": checkpointing,
            "blas": spade_model::blas::active(),
            "forward_s": m.time.forward, "backward_s": m.time.backward, "optimizer_s": m.time.optimizer,
            "step_s": m.time.total, "tokens_per_s": n / m.time.total,
            "optimizer_share": m.time.optimizer / m.time.total,
            "peak_rss_mib": spade_train::trainer::peak_rss_mib(), "load_s": load_s,
            "params": trainer.model.weights().num_params(),
            "cpu_s": cpu, "cores": cpu / m.time.total,
        })
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seqs = env_usize("SPADE_BENCH_GRPO_SEQS", 16);
    let tokens = env_usize("SPADE_BENCH_GRPO_TOKENS", 512);
    let threads = env_usize("SPADE_BENCH_THREADS", 1);
    if let Some(i) = args.iter().position(|a| a == "--one") {
        let mb: usize = args[i + 1].parse().unwrap();
        one(mb, seqs, tokens);
        return;
    }
    let mbs: Vec<usize> = std::env::var("SPADE_BENCH_GRPO_MB")
        .unwrap_or_else(|_| "1,2,4".into())
        .split(',')
        .map(|s| s.trim().parse().expect("SPADE_BENCH_GRPO_MB: numbers"))
        .collect();
    let exe = std::env::current_exe().unwrap();
    let mut rows = Vec::new();
    for &mb in &mbs {
        eprintln!("grpo bench: candle, micro-batch {mb}, {seqs}×{tokens} tokens, {threads} thread(s)");
        let out = Command::new(&exe).args(["--one", &mb.to_string()]).env("RAYON_NUM_THREADS", threads.to_string()).output().unwrap();
        assert!(out.status.success(), "micro-batch {mb}: {}", String::from_utf8_lossy(&out.stderr));
        let line = String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or("").to_string();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        eprintln!("  {v}");
        rows.push(v);
    }
    let peer = if std::env::var("SPADE_BENCH_NO_PEER").is_ok() {
        serde_json::Value::Null
    } else {
        let mut c = Command::new(std::env::var("SPADE_TORCH_PYTHON").unwrap_or_else(|_| "/usr/bin/python3".into()));
        c.arg(root().join("scripts/torch_grpo_ref.py"))
            .args(["bench", "--seqs", &seqs.to_string(), "--tokens", &tokens.to_string(), "--threads", &threads.to_string()])
            .arg("--micro-batches")
            .args(mbs.iter().map(|m| m.to_string()))
            .env_remove("OPENBLAS_CORETYPE")
            .env_remove("OPENBLAS_L2_SIZE")
            // torch.set_num_threads does not reach OpenBLAS's own threads: without these the
            // "1-thread" peer ran on ~1.6 cores (2026-11-30).
            .env("OPENBLAS_NUM_THREADS", threads.to_string())
            .env("OMP_NUM_THREADS", threads.to_string());
        eprintln!("grpo bench: PyTorch peer");
        match c.output() {
            Ok(o) if o.status.success() => {
                let v: serde_json::Value = serde_json::from_str(String::from_utf8_lossy(&o.stdout).trim()).unwrap();
                eprintln!("  {v}");
                v
            }
            Ok(o) => serde_json::json!({"error": String::from_utf8_lossy(&o.stderr).trim().to_string()}),
            Err(e) => serde_json::json!({"error": e.to_string()}),
        }
    };
    let ratio: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let p = peer.as_array().and_then(|a| a.iter().find(|p| p["micro_batch"] == r["micro_batch"]));
            serde_json::json!({
                "micro_batch": r["micro_batch"],
                "tokens_per_s_vs_torch": p.map(|p| r["tokens_per_s"].as_f64().unwrap() / p["tokens_per_s"].as_f64().unwrap()),
            })
        })
        .collect();
    let out = serde_json::json!({
        "bench": "grpo", "model": spade_model::default_model_path().display().to_string(),
        "seqs": seqs, "tokens": tokens, "threads": threads,
        "candle": rows, "torch": peer, "vs_torch": ratio,
        "targets": {"tokens_per_s_vs_torch": ">= 1.0", "optimizer_share": "<= 0.10", "peak_rss_mib_at_mb1": "<= 4096"},
    });
    let dir = root().join("target/bench");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("grpo.json");
    std::fs::write(&path, serde_json::to_string_pretty(&out).unwrap() + "\n").unwrap();
    println!("{}", serde_json::to_string_pretty(&out).unwrap());
    eprintln!("wrote {}", path.display());
}
