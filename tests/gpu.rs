//! scripts/gpu-check.sh, the GPU path's one prepared check, as far as a machine without a GPU can
//! run it: its dry run (every step printed, the ones that need a GPU skipped with a message, the
//! JSON written), its refusals (a bad option; no GPU: one line, exit 2), and its Python helpers
//! with the real spade-grpo-step on the CPU (rollouts for a model's vocabulary that the stage
//! reads; the update comparison that passes equal steps and fails different ones).

use std::process::Command;

use serde_json::Value;

use crate::util::*;

fn gpu_check() -> Command {
    let mut c = Command::new("bash");
    c.arg(root().join("scripts/gpu-check.sh")).env("SPADE_TORCH_PYTHON", python());
    c
}

const GPU_STEPS: [&str; 10] =
    ["forward-tiny", "forward", "generate-1", "generate-8", "generate-32", "grpo-device", "grpo-equal", "grpo-model", "round", "fsdp"];

#[test]
fn the_dry_run_prints_every_step_and_skips_the_gpu_ones_saying_so() {
    let d = tmp();
    let out = gpu_check().arg(d.path()).arg("--dry-run").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    for s in ["build", "tiny", "config", "model", "rollouts", "grpo-cpu"].iter().chain(&GPU_STEPS) {
        assert!(err.contains(&format!("== {s} (limit ")), "step {s} not printed:\n{err}");
    }
    assert_eq!(err.matches("skipped: dry run, this step needs a CUDA GPU").count(), GPU_STEPS.len(), "{err}");
    assert!(err.contains("make -C") && err.contains("build-cuda"), "{err}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("gpu-check.json")).unwrap()).unwrap();
    assert_eq!(doc["dry_run"], true);
    let steps = doc["steps"].as_array().unwrap();
    for s in GPU_STEPS {
        let row = steps.iter().find(|r| r["step"] == s).unwrap_or_else(|| panic!("{s} missing: {doc:#}"));
        assert_eq!(row["skipped"], "dry run: needs a CUDA GPU");
    }
    assert!(doc["failed"].as_array().unwrap().is_empty());
}

#[test]
fn a_bad_option_or_no_gpu_is_one_line_and_exit_2() {
    let d = tmp();
    let out = gpu_check().arg(d.path()).arg("--frobnicate").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown option --frobnicate") && err.trim().lines().count() == 1, "{err}");
    let out = gpu_check().output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    if Command::new("nvidia-smi").arg("-L").output().is_ok_and(|o| o.status.success()) {
        eprintln!("this machine has a GPU: the no-GPU refusal is not checked here");
        return;
    }
    let out = gpu_check().arg(d.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no GPU") && err.trim().lines().count() == 1, "{err}");
}

/// The helpers the device steps use, checked with the CPU's spade-grpo-step: the rollouts it
/// writes are read by the stage, two equal steps compare equal, a step at another learning rate
/// does not.
#[test]
fn the_helpers_write_rollouts_the_step_reads_and_compare_updates() {
    let d = tmp();
    let tiny = d.path().join("tiny");
    spade_model::write_tiny_model(&tiny, 7, spade_model::TinySpec::default()).unwrap();
    let helper = root().join("scripts/gpu_check.py");
    let rollouts = d.path().join("rollouts.jsonl");
    let out = Command::new(python()).arg(&helper).arg("rollouts").arg(&tiny).arg(&rollouts).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let vocab = serde_json::from_str::<Value>(&std::fs::read_to_string(tiny.join("config.json")).unwrap()).unwrap()["vocab_size"].as_u64().unwrap();
    let rows = read_jsonl(&rollouts);
    assert_eq!(rows.len(), 16);
    assert!(rows.iter().all(|r| r["token_ids"].as_array().unwrap().iter().all(|t| t.as_u64().unwrap() < vocab)));
    let step = |name: &str, lr: &str| {
        let o = d.path().join(name);
        stage("spade-grpo-step")
            .arg("--model")
            .arg(&tiny)
            .arg("--rollouts")
            .arg(&rollouts)
            .arg("-o")
            .arg(&o)
            .args(["--lr", lr, "--weight-decay", "0", "--seed", "1", "--threads", "1"])
            .assert()
            .success();
        o
    };
    let (a, b, c) = (step("a", "1e-3"), step("b", "1e-3"), step("c", "3e-3"));
    let compare = |x: &std::path::Path, y: &std::path::Path| {
        let out = Command::new(python()).arg(&helper).arg("compare").arg(&tiny).arg(x).arg(y).output().unwrap();
        let line: Value = serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
        (out.status.code(), line)
    };
    let (code, same) = compare(&a, &b);
    assert_eq!((code, &same["ok"]), (Some(0), &Value::Bool(true)), "{same}");
    assert!(same["max_change"].as_f64().unwrap() > 0.0, "the step changed nothing: {same}");
    let (code, other) = compare(&a, &c);
    assert_eq!((code, &other["ok"]), (Some(1), &Value::Bool(false)), "{other}");
}
