//! The server backend (`--server URL#MODEL`) against a real OpenAI-compatible server on loopback:
//! llama.cpp's `llama-server` (built by `scripts/llama-server.sh`) serving the default model's
//! GGUF. Ignored by default (the server takes ~20 min to build once); `make test-server` builds it
//! and runs them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use spade_model::LocalServer;

use crate::util::{read_jsonl, root, stage, tmp, write_jsonl};

/// The llama-server binary: `$SPADE_LLAMA_SERVER`, else the cached build (`make test-server` and
/// `make test-slurm` build it).
pub(crate) fn llama_server_bin() -> PathBuf {
    let bin = std::env::var_os("SPADE_LLAMA_SERVER").map(PathBuf::from).unwrap_or_else(|| root().join(".cache/llama-server/bin/llama-server"));
    assert!(bin.exists(), "{} missing: run `make test-server` or `make test-slurm` (they build llama-server)", bin.display());
    bin
}

/// llama-server on the default model's GGUF.
fn llama_server() -> LocalServer {
    LocalServer::start(&llama_server_bin(), &spade_model::default_model_path(), "smollm2", 4, 4096, 1).unwrap()
}

fn env_rows() -> Vec<Value> {
    ["guess.py", "guess2.py", "guess3.py"]
        .iter()
        .map(|n| {
            let code = std::fs::read_to_string(root().join("tests/data/rollout").join(n)).unwrap();
            let hint = code.lines().find_map(|l| l.strip_prefix("# hint:")).map(|h| h.trim().to_string());
            json!({"env_id": spade_sandbox::validate::env_id(&code), "code": code, "hint": hint})
        })
        .collect()
}

fn rollout_args(envs: &Path, out: &Path, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = vec!["--envs".into(), envs.display().to_string(), "-o".into(), out.display().to_string()];
    for x in ["--group", "2", "--max-turns", "2", "--max-new-tokens", "24", "--threads", "1", "--progress", "off"].iter().chain(extra) {
        a.push(x.to_string());
    }
    a
}

fn rollout_cmd(envs: &Path, out: &Path, extra: &[&str]) -> assert_cmd::Command {
    let mut c = stage("spade-rollout");
    c.args(rollout_args(envs, out, extra));
    c
}

fn u32s(v: &Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

/// Mean |Δ| between the log-probs the server recorded for the agent tokens of `rows` (rollouts,
/// temperature 1) and the embedded scoring of the same tokens by `model`, and the token count.
pub(crate) fn logprob_gap(rows: &[Value], model: &Path) -> (f64, usize) {
    let model = spade_model::load(model, &spade_model::candle_core::Device::Cpu).unwrap();
    let (mut sum, mut n) = (0.0f64, 0usize);
    for r in rows {
        assert_eq!(r["status"], "ok", "{r}");
        let tokens = u32s(&r["token_ids"]);
        let mask: Vec<u64> = r["loss_mask"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).collect();
        let lps: Vec<f64> = r["logprobs"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        let scored = model.token_logprobs_no_grad(std::slice::from_ref(&tokens), 1.0, None).unwrap().remove(0);
        for t in (0..tokens.len()).filter(|&t| mask[t] == 1) {
            sum += (scored[t] as f64 - lps[t]).abs();
            n += 1;
        }
    }
    (sum / n.max(1) as f64, n)
}

fn keys(rows: &[Value]) -> BTreeSet<String> {
    rows.iter().flat_map(|r| r.as_object().unwrap().keys().cloned()).collect()
}

#[test]
#[ignore = "needs llama-server: make test-server"]
fn rollouts_through_the_server_match_the_embedded_backend() {
    let server = llama_server();
    let d = tmp();
    let envs = d.path().join("envs.jsonl");
    write_jsonl(&envs, &env_rows());
    let (via, local) = (d.path().join("server.jsonl"), d.path().join("embedded.jsonl"));
    rollout_cmd(&envs, &via, &["--server", &server.spec().to_string()]).assert().success();
    rollout_cmd(&envs, &local, &[]).assert().success();
    let (a, b) = (read_jsonl(&via), read_jsonl(&local));
    assert_eq!(a.len(), 12);
    assert_eq!(keys(&a), keys(&b), "the two backends write the same columns");
    let ids = |rows: &[Value]| -> BTreeSet<String> {
        rows.iter().map(|r| format!("{} {} {} {}", r["env_id"], r["arm"], r["episode"], r["seed"])).collect()
    };
    assert_eq!(ids(&a), ids(&b), "the same episodes with the same seeds");

    // The server's log-probs of its own tokens agree with the embedded model's scoring of them.
    let (mean, n) = logprob_gap(&a, &spade_model::default_model_path());
    eprintln!("server vs embedded log-probs: mean |Δ| = {mean:.4} nats over {n} agent tokens");
    assert!(n > 12 && mean < 0.1, "mean |Δ| {mean} over {n} tokens");

    // The configuration records the backend.
    let meta = read_jsonl(&via);
    assert!(!meta.is_empty());
}

#[test]
#[ignore = "needs llama-server: make test-server"]
fn a_killed_server_is_a_clear_error_and_finished_episodes_are_kept() {
    let mut server = llama_server();
    let d = tmp();
    let envs = d.path().join("envs.jsonl");
    write_jsonl(&envs, &env_rows());
    let out = d.path().join("rollouts.jsonl");
    let spec = server.spec().to_string();
    let child = Command::new(crate::util::bin_dir().join("spade-rollout"))
        .args(rollout_args(&envs, &out, &["--server", &spec, "--server-retries", "1", "--concurrency", "1"]))
        .env_remove("SPADE_SERVER")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // One episode at a time, at most two turns: after three replies at least one has finished.
    let t = Instant::now();
    while server.served() < 3 {
        assert!(t.elapsed() < Duration::from_secs(300), "the rollout never reached the server");
        std::thread::sleep(Duration::from_millis(20));
    }
    server.kill();
    let done = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(2), "{err}");
    let line = err.lines().find(|l| l.starts_with("error:")).unwrap_or_else(|| panic!("{err}"));
    let partial = d.path().join("rollouts.partial.jsonl");
    assert!(line.contains("unreachable") && line.contains(&partial.display().to_string()), "{line}");
    assert!(!out.exists(), "no output table from a failed run");
    let kept = read_jsonl(&partial);
    assert!(!kept.is_empty() && kept.len() < 12, "{} rows kept", kept.len());
    assert!(kept.iter().all(|r| r["status"] == "ok" && !r["token_ids"].as_array().unwrap().is_empty()));
}

#[test]
#[ignore = "needs llama-server: make test-server"]
fn design_and_eval_generate_through_the_server() {
    let server = llama_server();
    let d = tmp();
    let docs = d.path().join("docs.jsonl");
    write_jsonl(&docs, &[json!({"doc_id": "d1", "domain": "maths", "text": "A prime number has exactly two divisors: one and itself."})]);
    let (via, local) = (d.path().join("server.jsonl"), d.path().join("embedded.jsonl"));
    for (out, extra) in [(&via, vec!["--server".to_string(), server.spec().to_string()]), (&local, vec![])] {
        let mut c = stage("spade-design");
        c.arg("--docs").arg(&docs).arg("--memory").arg(root().join("data/seed-envs")).arg("-o").arg(out);
        c.args(["--per-doc", "2", "--max-new-tokens", "32", "--examples", "1", "--threads", "1", "--progress", "off"]);
        c.args(&extra).assert().success();
    }
    let (a, b) = (read_jsonl(&via), read_jsonl(&local));
    assert_eq!((a.len(), keys(&a)), (b.len(), keys(&b)));
    for r in &a {
        assert_eq!(r["response_ids"].as_array().unwrap().len(), r["response_logprobs"].as_array().unwrap().len(), "{r}");
    }

    let out = d.path().join("eval.jsonl");
    let mut c = stage("spade-eval");
    c.args(["--suite", "rg:math", "--n", "1", "--max-tokens", "16", "--threads", "1", "--progress", "off"]);
    c.arg("--server").arg(server.spec().to_string()).arg("-o").arg(&out);
    c.assert().success();
    let rows = read_jsonl(&out);
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r["response"].is_string()), "{rows:?}");
}

/// The weight hand-off to llama.cpp: a checkpoint trained by spade (one GRPO step from the default
/// model, a learning rate large enough to move every log-prob) is converted with llama.cpp's own
/// converter (scripts/to-gguf.sh, f32), llama-server serves it, and the log-probs it reports for
/// its own tokens are the trained model's (embedded scoring, to float tolerance), not the base's.
#[test]
#[ignore = "needs llama-server and the PyTorch environment (~7 GB): make test-server"]
fn a_trained_checkpoint_is_served_after_the_gguf_hand_off() {
    use spade_train::{assign_advantages, AdamW, AdvantageConfig, Role, Sample, StepConfig, Trainer};
    let d = tmp();
    let base = spade_model::default_model_path();
    let mut t = Trainer::open(&base, &spade_model::candle_core::Device::Cpu).unwrap();
    let prompt = t.model.encode_chat(&[spade_model::Message::user("Guess my number between 1 and 10.")], true).unwrap();
    let mk = |m: &spade_model::Model, text: &str, reward: f64| {
        let resp = m.tokenizer().encode(text, false).unwrap();
        let tokens: Vec<u32> = prompt.iter().chain(&resp).copied().collect();
        let mask: Vec<u8> = (0..tokens.len()).map(|i| u8::from(i >= prompt.len())).collect();
        let lp = m.token_logprobs_no_grad(std::slice::from_ref(&tokens), 1.0, None).unwrap().remove(0);
        let behaviour = lp.iter().zip(&mask).map(|(l, k)| if *k == 1 { *l } else { 0.0 }).collect();
        Sample { role: Role::Agent, tokens, mask, behaviour, temperature: 1.0, reward, group: "g".into(), advantage: 0.0, policy_version: Some(0) }
    };
    let samples = vec![mk(&t.model, "My guess is 7.<|im_end|>", 1.0), mk(&t.model, "I do not know.<|im_end|>", 0.0)];
    let (samples, _, _) = assign_advantages(samples, &AdvantageConfig::default());
    let cfg = StepConfig { adamw: AdamW { lr: 3e-4, weight_decay: 0.0, ..Default::default() }, micro_batch: 2, ..Default::default() };
    t.step(&samples, &cfg, None).unwrap();
    let ckpt = d.path().join("checkpoint");
    t.save(&ckpt, None).unwrap();
    drop(t);

    let out = Command::new(root().join("scripts/to-gguf.sh")).arg(&ckpt).arg("f32").stderr(Stdio::inherit()).output().unwrap();
    assert!(out.status.success(), "to-gguf.sh failed");
    let gguf = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    assert_eq!(gguf, ckpt.join("model.f32.gguf"));
    // A second call finds it up to date and does not convert again.
    let before = std::fs::metadata(&gguf).unwrap().modified().unwrap();
    let again = Command::new(root().join("scripts/to-gguf.sh")).arg(&ckpt).arg("f32").output().unwrap();
    assert!(again.status.success());
    assert_eq!(std::fs::metadata(&gguf).unwrap().modified().unwrap(), before);

    let server = LocalServer::start(&llama_server_bin(), &gguf, "trained", 4, 4096, 1).unwrap();
    let envs = d.path().join("envs.jsonl");
    write_jsonl(&envs, &env_rows());
    let via = d.path().join("server.jsonl");
    rollout_cmd(&envs, &via, &["--server", &server.spec().to_string()]).assert().success();
    let rows = read_jsonl(&via);
    let (trained, n) = logprob_gap(&rows, &ckpt);
    let (untrained, _) = logprob_gap(&rows, &base);
    eprintln!("served trained checkpoint: mean |Δ| to the trained model {trained:.4}, to the base {untrained:.4} nats over {n} tokens");
    assert!(n > 12 && trained < 0.01, "the server's log-probs are the trained model's: mean |Δ| {trained} over {n} tokens");
    assert!(untrained > 10.0 * trained.max(1e-3), "the served weights are not the base's: {untrained} vs {trained}");
}
