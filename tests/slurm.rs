//! `make test-slurm` (ignored by `cargo test`: it starts daemons): a one-node Slurm cluster on this
//! machine runs one round with rollout and eval as array jobs over `--shard I/N`
//! (scripts/slurm/round.sh); the same round in one process (`make round`, same seed and knobs)
//! gives the same outputs; the daemons the test started are stopped.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use spade_model::candle_core::Device;

use crate::round::{corpus, make, rows, run_ok};
use crate::util::*;

struct Cluster;

impl Cluster {
    fn up() -> Cluster {
        let st = Command::new("bash").arg(root().join("scripts/slurm/local-cluster.sh")).arg("up").status().unwrap();
        assert!(st.success(), "the local Slurm cluster did not come up");
        Cluster
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("bash").arg(root().join("scripts/slurm/local-cluster.sh")).arg("down").status();
    }
}

/// `scripts/slurm/round.sh RUN 1` against the local cluster, with this build's binaries.
fn round_sh(run: &Path) -> Command {
    let conf = std::env::var("SPADE_SLURM_STATE").unwrap_or("/tmp/spade-slurm".into()) + "/slurm.conf";
    let mut c = Command::new("bash");
    c.arg(root().join("scripts/slurm/round.sh")).arg(run).arg("1").current_dir(root());
    c.env("SLURM_CONF", conf).env("BIN", bin_dir());
    c
}

/// Rows keyed by `key` columns.
fn keyed(rows: Vec<Value>, key: &[&str]) -> BTreeMap<String, Value> {
    rows.into_iter().map(|r| (key.iter().map(|k| r[*k].to_string()).collect::<Vec<_>>().join("/"), r)).collect()
}

/// Equal up to `tol` (relative) on numbers, exactly elsewhere.
fn close(a: &Value, b: &Value, tol: f64) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= tol * x.abs().max(y.abs()).max(1.0)
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| close(p, q, tol)),
        (Value::Object(x), Value::Object(y)) => x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| close(v, w, tol))),
        _ => a == b,
    }
}

fn same_table(name: &str, a: &Path, b: &Path, key: &[&str], tol: f64) {
    let (ra, rb) = (keyed(rows(a), key), keyed(rows(b), key));
    assert!(!ra.is_empty(), "{name}: empty");
    assert_eq!(ra.keys().collect::<Vec<_>>(), rb.keys().collect::<Vec<_>>(), "{name}: other rows");
    for (k, v) in &ra {
        assert!(close(v, &rb[k], tol), "{name} row {k} differs:\n{v}\n{}", rb[k]);
    }
}

#[test]
#[ignore = "starts Slurm daemons: run by `make test-slurm`"]
fn a_sharded_slurm_round_equals_the_single_process_round() {
    let d = tmp();
    let model = tiny_model(&d.path().join("tiny"), 23, 8192);
    let corpus = corpus(d.path());
    let runs = d.path().join("runs");
    // The single-process round.
    let mut c = make(&runs, &model, &corpus, &["round".into(), "RUN=single".into(), "EVAL_SUITES=rg:math,rg:logic".into(), "EVAL_N=2".into()]);
    c.arg("TEMPERATURE=1.0");
    run_ok(c);
    // The same knobs through Slurm, rollout and eval as 2-task arrays.
    let _cluster = Cluster::up();
    let single = runs.join("single");
    let cfg: Value = serde_json::from_str(&std::fs::read_to_string(single.join("config.json")).unwrap()).unwrap();
    let knob = |k: &str| cfg[k].as_str().unwrap().to_string();
    let slurm = runs.join("slurm");
    let out = round_sh(&slurm)
        .env("MODEL", &model)
        .env("SHARDS", "2")
        .envs(
            [
                "size", "pool", "seed", "temperature", "threads", "lr", "variant", "corpus", "seeds", "eval_suites", "eval_n",
                "sample_flags", "design_flags", "validate_flags", "rollout_flags", "regret_flags", "grpo_flags", "eval_flags",
            ]
            .map(|k| (k.to_uppercase(), knob(k))),
        )
        .output()
        .unwrap();
    assert!(out.status.success(), "round.sh failed:\n{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let (a, b) = (single.join("round-0001"), slurm.join("round-0001"));
    same_table("docs", &a.join("docs.parquet"), &b.join("docs.parquet"), &["doc_id"], 0.0);
    same_table("candidates", &a.join("candidates.parquet"), &b.join("candidates.parquet"), &["candidate_id"], 0.0);
    same_table("rejects", &a.join("rejects.parquet"), &b.join("rejects.parquet"), &["candidate_id"], 0.0);
    assert_eq!(files_in(&b.join("step-0/rollouts")), ["shard-0.parquet", "shard-1.parquet"]);
    assert!(files_in(&b.join("eval")).iter().filter(|f| f.ends_with(".parquet")).eq(["shard-0.parquet", "shard-1.parquet"].iter()));
    // Shards batch other episodes together: log-probs agree up to float rounding.
    same_table("rollouts", &a.join("step-0/rollouts.parquet"), &b.join("step-0/rollouts"), &["env_id", "arm", "episode"], 1e-4);
    same_table("scores", &a.join("step-0/scores.parquet"), &b.join("step-0/scores.parquet"), &["env_id", "candidate_id"], 1e-6);
    same_table("memory", &a.join("memory.parquet"), &b.join("memory.parquet"), &["env_id"], 1e-6);
    same_table("eval", &a.join("eval.parquet"), &b.join("eval"), &["suite", "task", "item_id", "sample"], 1e-3);
    let wa = spade_model::load(&a.join("step-0/checkpoint"), &Device::Cpu).unwrap();
    let wb = spade_model::load(&b.join("step-0/checkpoint"), &Device::Cpu).unwrap();
    for (k, v) in wa.weights().named_vars() {
        let x = v.as_tensor().flatten_all().unwrap().to_vec1::<f32>().unwrap();
        let y = wb.weights().named_vars()[k].as_tensor().flatten_all().unwrap().to_vec1::<f32>().unwrap();
        // Log-prob rounding moves the TIS weights by ~1e-6; Adam's first update is ±lr per
        // element wherever the gradient is non-zero, so an element whose gradient is ~0 may move
        // differently. Almost every element agrees far below lr (1e-3).
        let off = x.iter().zip(&y).filter(|(p, q)| (*p - *q).abs() > 1e-4).count();
        assert!(off * 1000 <= x.len(), "{k}: {off} of {} weights differ by more than lr/10", x.len());
    }
}

/// The multi-node recipe on one node: round.sh with `SERVER_ENGINE=llama` submits a llama-server job
/// (scripts/slurm/serve.sh) on the default model's GGUF; design and the rollout array generate
/// through it, and it is cancelled once the rollouts are done.
#[test]
#[ignore = "starts Slurm daemons and llama-server: run by `make test-slurm`"]
fn a_slurm_round_generates_through_a_server_job() {
    let server = std::env::var_os("SPADE_LLAMA_SERVER")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root().join(".cache/llama-server/bin/llama-server"));
    assert!(server.exists(), "{} missing: `make test-slurm` builds it", server.display());
    let d = tmp();
    let corpus = corpus(d.path());
    let run = d.path().join("runs/served");
    let _cluster = Cluster::up();
    let out = round_sh(&run)
        .env("MODEL", spade_model::default_model_path())
        .env("LLAMA_SERVER", &server)
        .envs([
            ("SERVER_ENGINE", "llama"),
            ("SERVER_ENGINE_ARGS", "-t 1"),
            ("SHARDS", "2"),
            ("SIZE", "1,2,2"),
            ("POOL", "1"),
            ("THREADS", "1"),
            ("EVAL_SUITES", "rg:math"),
            ("EVAL_N", "1"),
            ("DESIGN_FLAGS", "--max-new-tokens 48 --examples 1"),
            ("ROLLOUT_FLAGS", "--max-new-tokens 16 --max-turns 2"),
            ("EVAL_FLAGS", "--max-tokens 16"),
        ])
        .env("CORPUS", &corpus)
        .output()
        .unwrap();
    assert!(out.status.success(), "round.sh failed:\n{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let r = run.join("round-0001");
    let url = r.join("server/url");
    assert!(!url.exists(), "the server job is cancelled once the rollouts are done");
    let log = std::fs::read_dir(r.join("slurm")).unwrap().map(|e| e.unwrap().path()).find(|p| p.to_string_lossy().contains("spade-server"));
    let log = std::fs::read_to_string(log.expect("a server job log")).unwrap();
    assert!(log.contains("serving ") && log.contains("/v1#spade"), "{log}");
    // Design and both rollout shards went through the server (their metrics lines record it).
    let lines = read_jsonl(&run.join("metrics.jsonl"));
    let via = |stage: &str| {
        lines
            .iter()
            .filter(|l| l["stage"] == stage)
            .map(|l| l["config"]["server"].as_str().is_some_and(|s| s.ends_with("/v1#spade")))
            .collect::<Vec<_>>()
    };
    assert_eq!(via("spade-design"), [true]);
    assert_eq!(via("spade-rollout"), [true, true]);
    assert!(!rows(&r.join("step-0/rollouts")).is_empty());
    assert!(r.join("step-0/checkpoint/model.safetensors").exists());
}
