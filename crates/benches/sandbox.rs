//! Sandbox bench (`make bench`): environment start-up p50/p99 (fork a hardened child; fork +
//! load a small environment), steps/s on one core with a trivial environment, and validate
//! throughput in candidates/s on a mixed batch. Writes `target/bench/sandbox.json`.
//!
//! Environment: `SPADE_BENCH_QUICK=1` shortens every measurement (for smoke runs).

#![forbid(unsafe_code)]

use std::time::{Duration, Instant};

use spade_sandbox::validate::{self, Candidate, CheckConfig, Setting};
use spade_sandbox::{Limits, Sandbox, SandboxConfig};

const TRIVIAL: &str = "class TrivialEnv:\n    def reset(self, seed=None):\n        self.n = 0\n        return 'start', {}\n    def step(self, action):\n        self.n += 1\n        return 'obs %d' % self.n, 0.0, False, False, {}\n";

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i]
}

/// `SPADE_SANDBOX_WORKER`, else the worker beside `target/release` (`make bench` builds it first:
/// it is the `spade-worker` package's binary, which `cargo bench` here does not build).
fn worker() -> std::path::PathBuf {
    spade_sandbox::find_worker().expect("spade-sandbox-worker: cargo build --release -p spade-worker")
}

fn main() {
    let quick = std::env::var_os("SPADE_BENCH_QUICK").is_some();
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let limits = Limits { call_timeout: Duration::from_secs(2), load_timeout: Duration::from_secs(4), ..Limits::default() };
    let sb = Sandbox::new(SandboxConfig { jobs: 1, limits: limits.clone(), worker: Some(worker()), ..Default::default() }).expect("sandbox");
    let layers = sb.layers().clone();

    // start-up: fork + harden (ready to load), and fork + harden + load + first reset
    let n = if quick { 50 } else { 500 };
    for _ in 0..20 {
        let mut ep = sb.start().unwrap();
        ep.close();
    }
    let mut spawn = Vec::with_capacity(n);
    let mut ready = Vec::with_capacity(n);
    let mut loaded = Vec::with_capacity(n);
    let (mut prep, mut hard, mut exec) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        let t = Instant::now();
        let mut ep = sb.start().unwrap();
        let t1 = t.elapsed().as_secs_f64() * 1e3;
        let li = ep.load(TRIVIAL, None).unwrap();
        for (k, v) in [("prepare_ms", &mut prep), ("harden_ms", &mut hard), ("load_ms", &mut exec)] {
            v.push(li.timings[k].as_f64().unwrap_or(0.0));
        }
        loaded.push(t.elapsed().as_secs_f64() * 1e3 - t1);
        ep.reset(0).unwrap();
        let t2 = t.elapsed().as_secs_f64() * 1e3;
        ep.close();
        spawn.push(t1);
        ready.push(t2);
    }

    // steps/s on one core
    let steps = if quick { 2_000 } else { 20_000 };
    let (mut ep, _) = sb.open_env(TRIVIAL, None).unwrap();
    ep.reset(0).unwrap();
    let t = Instant::now();
    for _ in 0..steps {
        ep.step("\\boxed{1}").unwrap();
    }
    let steps_per_s = steps as f64 / t.elapsed().as_secs_f64();
    ep.close();
    drop(sb);

    // validate throughput on a mixed batch, one job per core
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut codes: Vec<String> = Vec::new();
    for dir in ["data/seed-envs", "tests/data/sandbox/clean"] {
        if let Ok(rd) = std::fs::read_dir(root.join(dir)) {
            let mut files: Vec<_> = rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "py")).collect();
            files.sort();
            codes.extend(files.iter().filter_map(|p| std::fs::read_to_string(p).ok()));
        }
    }
    let broken = [
        "class E:\n  def reset(self\n",
        "raise ValueError('at import')\n",
        "class XEnv:\n def reset(self, seed=None):\n  return 1, {}\n def step(self, a):\n  return 'x', 0.0, True, False, {}\n",
        "class XEnv:\n def reset(self, seed=None):\n  return 'x', {}\n def step(self, a):\n  return 'x', float('nan'), True, False, {}\n",
        "class XEnv:\n def reset(self, seed=None):\n  return 'x', {}\n def step(self, a):\n  return 'x', 0.0, False, False, {}\n",
        "import os\nclass XEnv:\n def reset(self, seed=None):\n  return os.urandom(4).hex(), {}\n def step(self, a):\n  return 'x', 0.0, True, False, {}\n",
    ];
    let clean_n = codes.len();
    for b in broken {
        codes.push(b.to_string());
    }
    let rounds = if quick { 1 } else { 3 };
    let cands: Vec<Candidate> = (0..rounds)
        .flat_map(|_| {
            codes.iter().map(|c| Candidate { code: Some(c.clone()), hint: Some("think".into()), setting: Setting::parse(None), solver: None })
        })
        .collect();
    let jobs = cores;
    let sb = Sandbox::new(SandboxConfig { jobs, limits, worker: Some(worker()), ..Default::default() }).unwrap();
    let cfg = CheckConfig::default();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let t = Instant::now();
    let passed = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if i >= cands.len() {
                    break;
                }
                if validate::check(&sb, &cands[i], &cfg).passed() {
                    passed.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
            });
        }
    });
    let secs = t.elapsed().as_secs_f64();
    let cand_per_s = cands.len() as f64 / secs;

    let report = serde_json::json!({
        "cores": cores,
        "layers": layers,
        "env_startup_ms": {"n": n, "spawn_p50": pct(&mut spawn.clone(), 0.5), "spawn_p99": pct(&mut spawn, 0.99),
                           "load_p50": pct(&mut loaded.clone(), 0.5),
                           "child_prepare_p50": pct(&mut prep, 0.5), "child_harden_p50": pct(&mut hard, 0.5), "child_exec_p50": pct(&mut exec, 0.5), "ready_p50": pct(&mut ready.clone(), 0.5), "ready_p99": pct(&mut ready, 0.99)},
        "steps_per_s_one_core": steps_per_s,
        "validate": {"candidates": cands.len(), "clean_per_round": clean_n, "broken_per_round": broken.len(),
                     "passed": passed.into_inner(), "jobs": jobs, "seconds": secs, "candidates_per_s": cand_per_s},
    });
    let out = root.join("target/bench");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("sandbox.json"), serde_json::to_string_pretty(&report).unwrap()).unwrap();
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
}
