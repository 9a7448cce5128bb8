//! `make test-slurm` (ignored by `cargo test`: it starts daemons): a one-node Slurm cluster on this
//! machine runs rounds with rollout and eval as array jobs over `--shard I/N`
//! (scripts/slurm/round.sh, whose jobs run the Makefile's recipes); the same rounds in one process
//! (`make rounds`, `make round`, same seed and knobs) give the same outputs; the daemons the test
//! started are stopped.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use spade_model::candle_core::Device;

use crate::round::{clean_env, corpus, knobs, make, rows, run_ok, scored};
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

/// `scripts/slurm/round.sh RUN ROUND` against the local cluster, with this build's binaries.
fn round_sh(run: &Path, round: u32) -> Command {
    let conf = std::env::var("SPADE_SLURM_STATE").unwrap_or("/tmp/spade-slurm".into()) + "/slurm.conf";
    let mut c = Command::new("bash");
    clean_env(&mut c);
    c.arg(root().join("scripts/slurm/round.sh")).arg(run).arg(round.to_string()).current_dir(root());
    c.env("SLURM_CONF", conf).env("BIN", bin_dir()).env("NO_BUILD", "1");
    c
}

fn ok(mut c: Command) {
    let out = c.output().unwrap();
    assert!(out.status.success(), "round.sh failed:\n{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
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

fn same_weights(name: &str, a: &Path, b: &Path) {
    let wa = spade_model::load(a, &Device::Cpu).unwrap();
    let wb = spade_model::load(b, &Device::Cpu).unwrap();
    for (k, v) in wa.weights().named_vars() {
        let x = v.as_tensor().flatten_all().unwrap().to_vec1::<f32>().unwrap();
        let y = wb.weights().named_vars()[k].as_tensor().flatten_all().unwrap().to_vec1::<f32>().unwrap();
        // Log-prob rounding moves the TIS weights by ~1e-6; Adam's first update is ±lr per
        // element wherever the gradient is non-zero, so an element whose gradient is ~0 may move
        // differently. Almost every element agrees far below lr (1e-3).
        let off = x.iter().zip(&y).filter(|(p, q)| (*p - *q).abs() > 1e-4).count();
        assert!(off * 1000 <= x.len(), "{name} {k}: {off} of {} weights differ by more than lr/10", x.len());
    }
}

/// The run `b` (round.sh, 2 shards) has the tables of the run `a` (make) in `rounds` rounds of `steps` steps.
fn same_run(a: &Path, b: &Path, rounds: u32, steps: u32, designs: bool) {
    let ca: Value = serde_json::from_str(&std::fs::read_to_string(a.join("config.json")).unwrap()).unwrap();
    let cb: Value = serde_json::from_str(&std::fs::read_to_string(b.join("config.json")).unwrap()).unwrap();
    for (k, v) in ca.as_object().unwrap() {
        if k != "run" && k != "match_run" {
            assert_eq!(v, &cb[k], "knob {k}: make round and round.sh record the same value");
        }
    }
    same_table("starting memory", &a.join("memory-0000.parquet"), &b.join("memory-0000.parquet"), &["env_id"], 0.0);
    for r in 1..=rounds {
        let (ra, rb) = (a.join(format!("round-{r:04}")), b.join(format!("round-{r:04}")));
        let at = |t: &str| format!("round {r} {t}");
        if designs {
            // Round 1 designs with the starting model; later rounds with checkpoints equal up to rounding.
            let tol = if r == 1 { 0.0 } else { 1e-4 };
            same_table(&at("docs"), &ra.join("docs.parquet"), &rb.join("docs.parquet"), &["doc_id"], 0.0);
            same_table(&at("candidates"), &ra.join("candidates.parquet"), &rb.join("candidates.parquet"), &["candidate_id"], tol);
            same_table(&at("rejects"), &ra.join("rejects.parquet"), &rb.join("rejects.parquet"), &["candidate_id"], tol);
        } else {
            assert!(!rb.join("candidates.parquet").exists() && !rb.join("docs.parquet").exists(), "{}: no designer", at(""));
        }
        for s in 0..steps {
            let (sa, sb) = (ra.join(format!("step-{s}")), rb.join(format!("step-{s}")));
            let at = |t: &str| format!("round {r} step {s} {t}");
            assert_eq!(files_in(&sb.join("rollouts.parquet")), ["shard-0.parquet", "shard-1.parquet"], "{}", at("shards"));
            // Shards batch other episodes together: log-probs agree up to float rounding.
            same_table(&at("rollouts"), &sa.join("rollouts.parquet"), &sb.join("rollouts.parquet"), &["env_id", "arm", "episode"], 1e-4);
            same_table(&at("scores"), &sa.join("scores.parquet"), &sb.join("scores.parquet"), &["env_id", "candidate_id"], 1e-6);
            same_table(&at("memory"), &sa.join("memory.parquet"), &sb.join("memory.parquet"), &["env_id"], 1e-6);
            same_weights(&at("checkpoint"), &sa.join("checkpoint"), &sb.join("checkpoint"));
        }
        same_table(&at("memory"), &ra.join("memory.parquet"), &rb.join("memory.parquet"), &["env_id"], 1e-6);
        let tables: Vec<String> = files_in(&rb.join("eval.parquet")).into_iter().filter(|f| f.ends_with(".parquet")).collect();
        assert_eq!(tables, ["shard-0.parquet", "shard-1.parquet"], "{}", at("eval shards"));
        same_table(&at("eval"), &ra.join("eval.parquet"), &rb.join("eval.parquet"), &["suite", "task", "item_id", "sample"], 1e-3);
    }
    // The report, with the same sections and plots (the shard folders read as tables).
    let plots = |run: &Path| {
        let report = std::fs::read_to_string(run.join("report.html")).unwrap();
        assert!(!report.contains("no eval tables yet"), "{}: the report has the evaluation", run.display());
        report.matches("data:image/png;base64,").count()
    };
    assert!(plots(a) > 0);
    assert_eq!(plots(a), plots(b), "the reports have the same plots");
}

#[test]
#[ignore = "starts Slurm daemons: run by `make test-slurm`"]
fn a_sharded_slurm_round_equals_the_single_process_round() {
    let d = tmp();
    let model = tiny_model(&d.path().join("tiny"), 23, 8192);
    let corpus = corpus(d.path());
    let runs = d.path().join("runs");
    // Two rounds of two agent steps, each round's designer batch trained a round later (DELAY=1),
    // both settings designed and played (SETTINGS=games,tool-use); then the fixed-pool baseline,
    // matched to that run's round 1.
    let spade = ["STEPS=2", "DELAY=1", "EVAL_SUITES=rg:math,rg:logic", "EVAL_N=2", "EVAL_EVERY=1", "SETTINGS=games,tool-use"].map(String::from);
    let fixed = |run: &str| ["FIXED_POOL=1".to_string(), format!("MATCH_RUN={}", runs.join(run).display()), "STEPS=2".into()];
    let start = std::time::Instant::now();
    let mut c = make(&runs, &model, &corpus, &["rounds".into(), "N=2".into(), "RUN=single".into()]);
    c.args(&spade);
    run_ok(c);
    let mut c = make(&runs, &model, &corpus, &["round".into(), "RUN=single-fixed".into()]);
    c.args(fixed("single"));
    run_ok(c);
    eprintln!("make: {:.0} s", start.elapsed().as_secs_f64());

    // The same knobs through Slurm, rollout and eval as 2-task arrays: the test's knobs as VAR=value
    // arguments, STEPS, DELAY and FIXED_POOL as environment variables (round.sh takes both).
    let _cluster = Cluster::up();
    let start = std::time::Instant::now();
    let args: Vec<String> =
        knobs(&model, &corpus).into_iter().chain(spade.iter().filter(|k| !k.starts_with("STEPS=") && !k.starts_with("DELAY=")).cloned()).collect();
    for round in [1, 2] {
        let mut c = round_sh(&runs.join("slurm"), round);
        c.args(&args).env("SHARDS", "2").env("STEPS", "2").env("DELAY", "1");
        if round == 2 {
            c.arg("FLUSH=1"); // the run's last round, as make rounds does
        }
        ok(c);
    }
    let mut c = round_sh(&runs.join("slurm-fixed"), 1);
    let [fp, mr, st] = fixed("slurm");
    c.args(knobs(&model, &corpus)).args(["SHARDS=2".to_string(), mr, st]).env("FIXED_POOL", &fp["FIXED_POOL=".len()..]);
    ok(c);
    eprintln!("round.sh: {:.0} s", start.elapsed().as_secs_f64());

    let (single, slurm) = (runs.join("single"), runs.join("slurm"));
    same_run(&single, &slurm, 2, 2, true);
    same_run(&runs.join("single-fixed"), &runs.join("slurm-fixed"), 1, 2, false);
    // DELAY=1: round 1 trains no designer; round 2's last step trains round 1's designer batch and,
    // the run's last round (FLUSH=1), its own.
    for run in [&single, &slurm] {
        for (r, s) in [(1, 0), (1, 1), (2, 0)] {
            assert!(scored(&run.join(format!("round-{r:04}/step-{s}"))).is_empty(), "round {r} step {s} trains no designer");
        }
        let mut batch: Vec<String> = ["round-0001", "round-0002"]
            .iter()
            .flat_map(|r| rows(&run.join(r).join("candidates.parquet")))
            .map(|r| r["candidate_id"].as_str().unwrap().to_string())
            .collect();
        batch.sort();
        assert_eq!(scored(&run.join("round-0002/step-1")), batch, "round 2 trains round 1's designer batch and its own");
    }
    // The baseline played as many environments as the run it is matched to.
    let envs = |p: &Path| rows(p).iter().map(|r| r["env_id"].to_string()).collect::<std::collections::BTreeSet<_>>().len();
    assert_eq!(envs(&runs.join("slurm-fixed/round-0001/step-0/rollouts.parquet")), envs(&slurm.join("round-0001/step-0/rollouts.parquet")));

    // A failing job fails the round (the jobs after it never start), and bad input is a one-line error.
    let mut c = round_sh(&runs.join("broken"), 1);
    c.args(knobs(&model, &corpus)).args(["SHARDS=2", "ROLLOUT_FLAGS=--no-such-flag"]);
    let out = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("error: round 1 failed; job logs in"), "{stderr}");
    assert!(!runs.join("broken/round-0001/memory.parquet").exists());
    let mut c = round_sh(&runs.join("broken"), 1);
    c.args(knobs(&model, &corpus)).arg("STEPS=0");
    let out = c.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!((out.status.code(), stderr.trim().lines().count()), (Some(2), 1), "{stderr}");
}

/// The multi-node recipe on one node, over two rounds: round.sh with `SERVER_ENGINE=llama` submits a
/// llama-server job (scripts/slurm/serve.sh) for each step; design and the rollout array generate
/// through it, and it is cancelled once the rollouts are done. Round 1 serves the default model's
/// GGUF; round 2 serves round 1's trained checkpoint, converted by llama.cpp's converter
/// (scripts/to-gguf.sh): the weight hand-off. The log-probs round 2's server reported are the
/// checkpoint's (embedded scoring of the same tokens).
#[test]
#[ignore = "starts Slurm daemons and llama-server: run by `make test-slurm`"]
fn slurm_rounds_generate_through_server_jobs_with_the_trained_weights() {
    let server = crate::server::llama_server_bin();
    let d = tmp();
    let corpus = corpus(d.path());
    let run = d.path().join("runs/served");
    let _cluster = Cluster::up();
    for round in [1, 2] {
        let out = round_sh(&run, round)
            .env("MODEL", spade_model::default_model_path())
            .env("LLAMA_SERVER", &server)
            .envs([
                ("SERVER_ENGINE", "llama"),
                ("SERVER_ENGINE_ARGS", "-t 1"),
                ("GGUF_TYPE", "f32"),
                ("SHARDS", "2"),
                ("SIZE", "1,2,4"),
                // Seed environments a random policy wins half of the time: agent groups with reward
                // variance, so round 1 trains, with a step large enough to move every log-prob.
                ("SEEDS", "tests/data/round-seeds"),
                ("POOL", "3"),
                ("THREADS", "1"),
                ("LR", "1e-4"),
                // A server reports log-probs at temperature 1: the designer samples at 1 here.
                ("DESIGN_TEMPERATURE", "1.0"),
                ("EVAL_SUITES", "rg:math"),
                ("EVAL_N", "1"),
                ("DESIGN_FLAGS", "--max-new-tokens 48 --examples 1"),
                ("ROLLOUT_FLAGS", "--max-new-tokens 16 --max-turns 2"),
                ("EVAL_FLAGS", "--max-tokens 16"),
            ])
            .env("CORPUS", &corpus)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "round.sh round {round} failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let r = run.join(format!("round-{round:04}"));
        assert!(files_in(&r.join("server")).is_empty(), "the server job is cancelled once the rollouts are done (its address removed)");
        let log = std::fs::read_dir(r.join("slurm")).unwrap().map(|e| e.unwrap().path()).find(|p| p.to_string_lossy().contains("spade-server"));
        let log = std::fs::read_to_string(log.expect("a server job log")).unwrap();
        let served = if round == 1 { spade_model::default_model_path() } else { run.join("round-0001/step-0/checkpoint/model.f32.gguf") };
        assert!(log.contains(&format!("serving {} at ", served.display())) && log.contains("/v1#spade"), "{log}");
        assert!(!rows(&r.join("step-0/rollouts.parquet")).is_empty());
        assert!(r.join("step-0/checkpoint/model.safetensors").exists());
    }
    // Design and both rollout shards went through the server (their metrics lines record it).
    let lines = read_jsonl(&run.join("metrics.jsonl"));
    let via = |stage: &str| {
        lines
            .iter()
            .filter(|l| l["stage"] == stage)
            .map(|l| l["config"]["server"].as_str().is_some_and(|s| s.ends_with("/v1#spade")))
            .collect::<Vec<_>>()
    };
    assert_eq!(via("spade-design"), [true, true]);
    assert_eq!(via("spade-rollout"), [true, true, true, true]);
    assert_eq!(via("spade-eval"), [false, false, false, false], "eval runs embedded");
    // Round 2 generated with round 1's trained weights.
    let trained = run.join("round-0001/step-0/checkpoint");
    let round2 = rows(&run.join("round-0002/step-0/rollouts.parquet"));
    let (gap, n) = crate::server::logprob_gap(&round2, &trained);
    let (gap_base, _) = crate::server::logprob_gap(&round2, &spade_model::default_model_path());
    eprintln!("round 2's server vs round 1's checkpoint: mean |Δ| {gap:.4}; vs the base model {gap_base:.4} nats over {n} tokens");
    assert!(n > 0 && gap < 0.01, "round 2 is served round 1's checkpoint: mean |Δ| {gap} over {n} tokens");
    assert!(gap_base > 5.0 * gap.max(1e-3), "round 1 trained, and its weights, not the base's, are served: {gap_base} vs {gap}");
}

/// The FSDP trainer on a cluster: round.sh with `GRPO_STEP=scripts/grpo_step_fsdp.sh` and two Slurm
/// tasks per job, so the training job runs `srun torchrun --nnodes 2` (two agents meeting by c10d
/// rendezvous, one process each, gloo); its checkpoint equals the one `make round` writes with
/// spade's own trainer on the same inputs (to float tolerance).
#[test]
#[ignore = "starts Slurm daemons and needs the PyTorch environment: run by `make test-slurm`"]
fn a_slurm_round_trains_with_fsdp_over_two_tasks() {
    let d = tmp();
    let model = tiny_model(&d.path().join("tiny"), 29, 8192);
    let corpus = corpus(d.path());
    let runs = d.path().join("runs");
    run_ok(make(&runs, &model, &corpus, &["round".into(), "RUN=single".into(), "EVAL_EVERY=0".into()]));
    let _cluster = Cluster::up();
    let mut c = round_sh(&runs.join("fsdp"), 1);
    c.args(knobs(&model, &corpus)).args(["GRPO_STEP=scripts/grpo_step_fsdp.sh", "EVAL_EVERY=0"]).env("SBATCH_ARGS", "--ntasks 2");
    let out = c.output().unwrap();
    if !out.status.success() {
        let logs = runs.join("fsdp/round-0001/slurm");
        let tails: Vec<String> = files_in(&logs)
            .iter()
            .map(|f| {
                let text = std::fs::read_to_string(logs.join(f)).unwrap_or_default();
                let lines: Vec<&str> = text.lines().collect();
                format!("== {f}\n{}", lines[lines.len().saturating_sub(15)..].join("\n"))
            })
            .collect();
        panic!("round.sh failed:\n{}\n{}", String::from_utf8_lossy(&out.stderr), tails.join("\n"));
    }
    let line = read_jsonl(&runs.join("fsdp/metrics.jsonl")).into_iter().find(|l| l["stage"] == "spade-grpo-step").expect("a GRPO step line");
    assert_eq!(line["metrics"]["trainer"]["engine"], "fsdp");
    assert_eq!(line["metrics"]["trainer"]["world_size"], 2, "two torchrun agents, one per task");
    let (a, b) = (runs.join("single/round-0001/step-0/checkpoint"), runs.join("fsdp/round-0001/step-0/checkpoint"));
    let e = crate::grpo::fsdp::update_error(&model, &a, &b);
    eprintln!("FSDP over two Slurm tasks vs spade's trainer: worst update relative error {e:.2e}");
    assert!(e <= 2e-3, "update relative error {e}");
}
