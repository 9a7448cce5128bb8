//! Rollout bench (`make bench`): episodes/min and generated tokens/s of `spade_rollout::play` on
//! the default model with 16 seed environments (`data/seed-envs/`, every other file) × 2 arms ×
//! G=4 = 128 episodes, all batched together, versus episodes played one at a time. Writes
//! `target/bench/rollout.json`.
//!
//! Episodes are short so the bench fits a shared 2-core machine: `--max-turns 2`,
//! `--max-new-tokens 48` by default. One at a time is measured on a subset (the first no-hint
//! episode of every environment, 16 episodes) unless `SPADE_BENCH_FULL=1`; its rates are per
//! episode and per token, so the two compare directly.
//!
//! The batched episodes run on the generation engine with `SPADE_BENCH_SLOTS` slots (16), its keys
//! and values kept across turns, and again on the static decoder it replaced (`SPADE_ENGINE=static`,
//! same batch size). When llama.cpp's `llama-server` is built (`scripts/llama-server.sh`, or
//! `$SPADE_LLAMA_SERVER`), they are also played through it (the `--server` backend, the same number
//! of slots) on loopback; `embedded_vs_server_episodes_per_min` is the engine's rate over the server's.
//!
//! The batched episodes run again in each representation `SPADE_BENCH_REPRS` names (default
//! `q8_0`; the first runs are f32), each with its ratio to the server.
//!
//! Environment: `SPADE_BENCH_QUICK=1` (4 environments, G=2, 1 turn, 16 tokens),
//! `SPADE_BENCH_TURNS`, `SPADE_BENCH_TOKENS`, `SPADE_BENCH_FULL=1`, `SPADE_BENCH_SLOTS`, `SPADE_MODEL`,
//! `SPADE_THREADS`.

#![forbid(unsafe_code)]

use std::path::Path;
use std::time::Instant;

use serde_json::json;
use spade_model::{ModelArgs, SamplingParams};
use spade_rollout::seed::episode_seed;
use spade_rollout::{play, Arm, EnvSpec, EpisodeSpec, ModelPolicy, PlayConfig, PlayStats, Setting};
use spade_sandbox::{Sandbox, SandboxConfig};

fn header(code: &str, key: &str) -> Option<String> {
    code.lines().take_while(|l| l.starts_with('#')).find_map(|l| {
        let (k, v) = l.trim_start_matches('#').trim().split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

fn env_var(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn summary(stats: &PlayStats, outcomes: &[spade_rollout::EpisodeOutcome]) -> serde_json::Value {
    let ok = outcomes.iter().filter(|o| o.status == spade_schema::Status::Ok).count();
    let mut statuses = std::collections::BTreeMap::<String, usize>::new();
    for o in outcomes {
        *statuses.entry(o.status.to_string()).or_default() += 1;
    }
    json!({
        "episodes": stats.episodes,
        "ok": ok,
        "statuses": statuses,
        "turns": outcomes.iter().map(|o| o.turns as usize).sum::<usize>(),
        "generated_tokens": stats.generated_tokens,
        "generate_calls": stats.generate_calls,
        "mean_batch": stats.sequences as f64 / stats.generate_calls.max(1) as f64,
        "seconds": stats.wall_secs,
        "generate_seconds": stats.generate_secs,
        "episodes_per_min": stats.episodes as f64 / stats.wall_secs * 60.0,
        "generated_tokens_per_s": stats.generated_tokens as f64 / stats.wall_secs,
        "mean_return": outcomes.iter().map(|o| o.ret).sum::<f64>() / outcomes.len().max(1) as f64,
    })
}

fn main() {
    let quick = std::env::var_os("SPADE_BENCH_QUICK").is_some();
    let full = std::env::var_os("SPADE_BENCH_FULL").is_some();
    let (n_envs, group) = if quick { (4, 2) } else { (16, 4) };
    let max_turns = env_var("SPADE_BENCH_TURNS", if quick { 1 } else { 2 }) as u32;
    let max_new_tokens = env_var("SPADE_BENCH_TOKENS", if quick { 16 } else { 48 });

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = std::fs::read_dir(root.join("data/seed-envs"))
        .expect("data/seed-envs")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    files.sort();
    let envs: Vec<EnvSpec> = files
        .iter()
        .step_by(2)
        .take(n_envs)
        .map(|p| {
            let code = std::fs::read_to_string(p).unwrap();
            EnvSpec {
                env_id: spade_sandbox::validate::env_id(&code),
                hint: header(&code, "hint"),
                skill: header(&code, "skill"),
                setting: Setting::parse(header(&code, "setting").as_deref()),
                code,
                origin: "new",
            }
        })
        .collect();
    let mut specs = Vec::new();
    for (i, e) in envs.iter().enumerate() {
        for arm in [Arm::Hint, Arm::NoHint] {
            for k in 0..group {
                specs.push(EpisodeSpec { env: i, arm, episode: k, seed: episode_seed(0, 0, 0, &e.env_id, arm.as_str(), k) });
            }
        }
    }

    let margs = ModelArgs { threads: std::env::var("SPADE_THREADS").ok().and_then(|t| t.parse().ok()), ..Default::default() };
    let model_path = margs.model_path();
    let model = margs.load().unwrap_or_else(|e| panic!("loading {}: {e} (run scripts/fetch-model.sh)", model_path.display()));
    let slots = env_var("SPADE_BENCH_SLOTS", 16);
    let policy = ModelPolicy { model: &model, params: SamplingParams { temperature: 1.0, max_batch: slots, ..Default::default() } };
    // SPADE_SANDBOX_WORKER, else beside target/release (`make bench` builds it: cargo build --release -p spade-worker).
    let worker = spade_sandbox::find_worker().expect("spade-sandbox-worker: cargo build --release -p spade-worker");
    let sandbox = Sandbox::new(SandboxConfig { jobs: 2, worker: Some(worker), ..Default::default() }).expect("sandbox");

    let batched_cfg = PlayConfig { max_turns, max_new_tokens, concurrency: 256, env_threads: 8, ..Default::default() };
    let t = Instant::now();
    let (b_out, b_stats) = play(&envs, &specs, &policy, &sandbox, &batched_cfg, &mut |_| {}).expect("batched play");
    eprintln!("batched: {} episodes in {:.1}s", b_out.len(), t.elapsed().as_secs_f64());
    let engine_stats = model.engine_stats();

    // The same episodes on the static decoder (read per call from the environment).
    std::env::set_var(spade_model::generate::ENGINE_ENV, "static");
    let t = Instant::now();
    let (f_out, f_stats) = play(&envs, &specs, &policy, &sandbox, &batched_cfg, &mut |_| {}).expect("static play");
    eprintln!("static decoder: {} episodes in {:.1}s", f_out.len(), t.elapsed().as_secs_f64());
    std::env::remove_var(spade_model::generate::ENGINE_ENV);

    let seq_specs: Vec<EpisodeSpec> =
        if full { specs.clone() } else { specs.iter().copied().filter(|s| s.arm == Arm::NoHint && s.episode == 0).collect() };
    let seq_cfg = PlayConfig { concurrency: 1, ..batched_cfg.clone() };
    let t = Instant::now();
    let (s_out, s_stats) = play(&envs, &seq_specs, &policy, &sandbox, &seq_cfg, &mut |_| {}).expect("one-at-a-time play");
    eprintln!("one at a time: {} episodes in {:.1}s", s_out.len(), t.elapsed().as_secs_f64());

    // The same batched episodes through llama.cpp's llama-server on loopback (the server backend),
    // when it is built (scripts/llama-server.sh; `make bench` builds it).
    let server_bin =
        std::env::var_os("SPADE_LLAMA_SERVER").map(std::path::PathBuf::from).unwrap_or_else(|| root.join(".cache/llama-server/bin/llama-server"));
    let via_server = if server_bin.exists() {
        let threads: usize = std::env::var("RAYON_NUM_THREADS").ok().and_then(|t| t.parse().ok()).unwrap_or(2);
        let local = spade_model::LocalServer::start(&server_bin, &model_path, "bench", slots, 2048, threads).expect("llama-server");
        let args = spade_model::ServerArgs::default(); // requests in flight = the call's slots
        let sm = spade_model::ServedModel::new(model.clone(), spade_model::Server::connect(local.spec(), &args).expect("server"));
        let sp = ModelPolicy { model: &sm, params: policy.params.clone() };
        let t = Instant::now();
        match play(&envs, &specs, &sp, &sandbox, &batched_cfg, &mut |_| {}) {
            Ok((v_out, v_stats)) => {
                eprintln!("through llama-server: {} episodes in {:.1}s", v_out.len(), t.elapsed().as_secs_f64());
                let mut v = summary(&v_stats, &v_out);
                v["server"] = json!({"binary": server_bin.display().to_string(), "slots": slots, "threads": threads});
                Some(v)
            }
            Err(e) => {
                // Kept in the report: the embedded figures stand without it.
                eprintln!("through llama-server: failed: {e}");
                Some(json!({ "error": e.to_string() }))
            }
        }
    } else {
        eprintln!("{} not built: no server figures (scripts/llama-server.sh builds it)", server_bin.display());
        None
    };

    // The batched episodes again in each other representation (`SPADE_BENCH_REPRS`, default
    // q8_0): a fresh model, so its engine counters are its own.
    let extra: Vec<spade_model::Repr> = std::env::var("SPADE_BENCH_REPRS")
        .unwrap_or_else(|_| "q8_0".into())
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().expect("SPADE_BENCH_REPRS: f32 | q8_0"))
        .collect();
    let mut by_repr = serde_json::Map::new();
    for repr in extra {
        let m = ModelArgs { repr, ..margs.clone() }.load().expect("model");
        let p = ModelPolicy { model: &m, params: policy.params.clone() };
        let t = Instant::now();
        let (out, stats) = play(&envs, &specs, &p, &sandbox, &batched_cfg, &mut |_| {}).expect("batched play");
        eprintln!("batched, {repr}: {} episodes in {:.1}s", out.len(), t.elapsed().as_secs_f64());
        let mut v = summary(&stats, &out);
        v["engine"] = json!(m.engine_stats());
        if let Some(server) = via_server.as_ref().and_then(|v| v["episodes_per_min"].as_f64()) {
            v["vs_server_episodes_per_min"] = json!(v["episodes_per_min"].as_f64().unwrap() / server);
        }
        by_repr.insert(repr.to_string(), v);
    }

    let mut b = summary(&b_stats, &b_out);
    b["engine"] = json!(engine_stats);
    b["prompt_tokens_reused"] = json!(engine_stats.reused_tokens as f64 / engine_stats.prompt_tokens.max(1) as f64);
    let f = summary(&f_stats, &f_out);
    let s = summary(&s_stats, &s_out);
    let speedup_eps = b["episodes_per_min"].as_f64().unwrap() / s["episodes_per_min"].as_f64().unwrap();
    let speedup_tok = b["generated_tokens_per_s"].as_f64().unwrap() / s["generated_tokens_per_s"].as_f64().unwrap();
    let report = json!({
        "model": model_path.display().to_string(),
        "repr": model.inference_repr().to_string(),
        "threads": std::env::var("RAYON_NUM_THREADS").ok(),
        "environments": envs.len(),
        "arms": 2,
        "group": group,
        "max_turns": max_turns,
        "max_new_tokens": max_new_tokens,
        "quick": quick,
        "slots": slots,
        "batched": b,
        "static_batched": f,
        "engine_vs_static_episodes_per_min": b["episodes_per_min"].as_f64().unwrap() / f["episodes_per_min"].as_f64().unwrap(),
        "one_at_a_time": s,
        "one_at_a_time_subset": !full,
        "speedup_episodes_per_min": speedup_eps,
        "speedup_tokens_per_s": speedup_tok,
        "server_batched": via_server,
        "embedded_vs_server_episodes_per_min": via_server.as_ref().and_then(|v| v["episodes_per_min"].as_f64()).map(|v| b["episodes_per_min"].as_f64().unwrap() / v),
        "batched_other_reprs": by_repr,
        "target": "embedded ≥ 2× llama-server with the same slots (the server runs the Q4_1 file; batched_other_reprs.q8_0 is the quantised peer)",
    });
    let dir = root.join("target/bench");
    std::fs::create_dir_all(&dir).unwrap();
    let text = serde_json::to_string_pretty(&report).unwrap();
    std::fs::write(dir.join("rollout.json"), &text).unwrap();
    println!("{text}");
}
