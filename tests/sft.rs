//! `spade-sft`, the designer warm-up, with a tiny model: its prompts are `spade-design`'s (one
//! function renders both), the loss falls when a few pairs are overfitted, held-out environments
//! and documents never reach training, and bad input fails in one line.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{json, Value};
use spade_design::prompt::{default_prompts_dir, PromptSpec, Templates};
use spade_model::candle_core::Device;

use crate::util::*;

fn docs(path: &Path, n: usize) {
    let rows: Vec<Value> = (0..n)
        .map(|i| {
            let domain = ["math", "science", "code"][i % 3];
            let text: Vec<String> = (0..30).map(|w| format!("{domain}{i}w{w}")).collect();
            json!({"doc_id": format!("d{i}"), "text": text.join(" "), "domain": domain, "words": 30, "truncated": false})
        })
        .collect();
    write_jsonl(path, &rows);
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

#[test]
fn warm_up_prompts_are_the_designers_prompts() {
    let d = tmp();
    let model_dir = tiny_model(&d.path().join("m"), 31, 8192);
    let docs_path = d.path().join("docs.jsonl");
    docs(&docs_path, 1);
    let pool = root().join("tests/data/round-seeds");
    let out = d.path().join("c.jsonl");
    stage("spade-design")
        .arg("--model")
        .arg(&model_dir)
        .arg("--docs")
        .arg(&docs_path)
        .arg("--memory")
        .arg(&pool)
        .args(["--per-doc", "1", "--examples", "1", "--max-new-tokens", "4", "--skills", "pattern-recognition"])
        .args(["--seed", "3", "--round", "0", "--progress", "off", "-q", "-o"])
        .arg(&out)
        .assert()
        .success();
    let row = &read_jsonl(&out)[0];
    let model = spade_model::load(&model_dir, &Device::Cpu).unwrap();
    let templates = Templates::load(&default_prompts_dir()).unwrap();
    let mut memory = spade::envs::read_design_memory(&[pool.display().to_string()]).unwrap();
    spade_design::memory::set_env_ids(&mut memory, spade_sandbox::validate::env_id);
    let doc = &spade::envs::read_docs(&[docs_path.display().to_string()]).unwrap()[0];
    let spec = PromptSpec { setting: spade_design::Setting::Games, hint_mode: spade_design::HintMode::Inline, examples: 1, negatives: 4 };
    let p = spade_design::group_prompt(&model, &templates, &spec, &memory, Some(doc), "pattern-recognition", "3/0/doc:d0", 8192 - 4).unwrap();
    assert!(p.ids == ids(&row["prompt_ids"]), "the shared function renders spade-design's prompt");
    // A supervised sequence is that prompt, then the target ending at the end-of-turn token.
    let target = spade_design::warmup::target_text(&memory[0], spade_design::HintMode::Inline);
    let (tokens, mask) = spade_design::warmup::supervised_sequence(&model, &p.messages, &p.ids, &target).unwrap();
    assert_eq!(&tokens[..p.ids.len()], &p.ids[..]);
    assert!(mask[..p.ids.len()].iter().all(|&m| m == 0) && mask[p.ids.len()..].iter().all(|&m| m == 1));
    assert!(model.eos_ids().contains(tokens.last().unwrap()), "the target ends where generation stops");
    let text = model.tokenizer().decode(&tokens[p.ids.len()..], true).unwrap();
    let parsed = spade_design::parse_response(&text);
    let strip = |c: &str| spade_design::memory::strip_header(c).trim().to_string();
    assert_eq!(parsed.code.as_deref().map(strip), Some(strip(&memory[0].code)));
    assert_eq!(parsed.hint, memory[0].hint);
}

/// `spade-sft` on the round seeds and 9 documents, writing `d/warm` and `d/metrics.jsonl`.
fn sft_cmd(d: &Path, model: &Path, extra: &[&str]) -> assert_cmd::Command {
    let docs_path = d.join("docs.jsonl");
    docs(&docs_path, 9);
    let mut c = stage("spade-sft");
    c.arg("--model")
        .arg(model)
        .arg("--pool")
        .arg(root().join("tests/data/round-seeds"))
        .arg("--docs")
        .arg(&docs_path)
        .arg("-o")
        .arg(d.join("warm"))
        .arg("--metrics")
        .arg(d.join("metrics.jsonl"))
        .args(["--examples", "0", "--max-new-tokens", "64", "--progress", "off"])
        .args(extra);
    c
}

fn sft(d: &Path, model: &Path, extra: &[&str]) -> Value {
    sft_cmd(d, model, &[&["-q"], extra].concat()).assert().success();
    read_jsonl(&d.join("metrics.jsonl")).pop().unwrap()
}

#[test]
fn a_warm_up_stopped_and_continued_makes_the_same_checkpoint() {
    let (a, b) = (tmp(), tmp());
    let model = tiny_model(&a.path().join("m"), 34, 4096);
    let flags = ["--held-out", "0", "--per-env", "1", "--epochs", "2", "--batch", "1", "--threads", "1", "--lr", "3e-3"];
    let other_lr = &flags[..flags.len() - 2];
    let whole = sft(a.path(), &model, &flags);
    assert_eq!((whole["updates"].as_i64(), whole["continued_from_update"].as_i64()), (Some(6), Some(0)), "{whole}");

    // Four updates, saved every two; each update is a log line (no bar is drawn) and a metrics line.
    let partial = b.path().join("warm.partial");
    let out = sft_cmd(b.path(), &model, &[&flags[..], &["--save-every", "2", "--stop-after", "4"]].concat()).assert().success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("update 1/6 (epoch 1): loss ") && err.contains("update 4/6 (epoch 2)") && !err.contains("update 5/6"), "{err}");
    // A log file (stderr is not a terminal) gets plain lines that start with the UTC time.
    let line = err.lines().find(|l| l.contains("update 1/6")).unwrap();
    assert!(!err.contains('\u{1b}') && line.as_bytes()[4] == b'-' && line.contains("Z  INFO update 1/6"), "{line}");
    assert!(!b.path().join("warm").exists() && partial.join("sft_progress.json").exists());
    let lines = read_jsonl(&b.path().join("metrics.jsonl"));
    let updates: Vec<i64> = lines.iter().filter(|l| l["event"] == "update").map(|l| l["update"].as_i64().unwrap()).collect();
    assert_eq!(updates, [1, 2, 3, 4]);
    assert!(lines.iter().all(|l| l["loss"].as_f64().unwrap() > 0.0 && l["tokens"].as_u64().unwrap() > 0), "{lines:?}");

    // Other settings do not continue it: one line naming the setting, the saved work kept.
    let out = sft_cmd(b.path(), &model, &[other_lr, &["--lr", "1e-3"]].concat()).assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("lr: 0.003 there, 0.001 now") && err.trim().lines().count() == 1, "{err}");
    assert!(partial.exists());

    // The same command continues from update 4 and ends where the uninterrupted warm-up did.
    let cont = sft(b.path(), &model, &flags);
    assert_eq!(cont["continued_from_update"].as_i64(), Some(4), "{cont}");
    assert_eq!((&cont["epoch_loss"], &cont["held_out_loss_by_epoch"]), (&whole["epoch_loss"], &whole["held_out_loss_by_epoch"]));
    let weights = |d: &Path| std::fs::read(d.join("warm/model.safetensors")).unwrap();
    assert!(weights(a.path()) == weights(b.path()), "the continued warm-up's weights differ");
    assert!(!partial.exists(), "the partial checkpoint is removed once the warm-up is done");
    let state: Value = serde_json::from_str(&std::fs::read_to_string(b.path().join("warm/trainer_state.json")).unwrap()).unwrap();
    assert_eq!((state["step"].as_i64(), state["optimizer_steps"].as_i64()), (Some(0), Some(0)));

    // --fresh starts over.
    sft_cmd(b.path(), &model, &[&flags[..], &["--stop-after", "1", "-q"]].concat()).assert().success();
    let fresh = sft(b.path(), &model, &[other_lr, &["--fresh", "--lr", "1e-3"]].concat());
    assert_eq!(fresh["continued_from_update"].as_i64(), Some(0));
}

#[test]
fn the_loss_falls_when_a_few_pairs_are_overfitted() {
    let d = tmp();
    let model = tiny_model(&d.path().join("m"), 32, 4096);
    let m = sft(d.path(), &model, &["--held-out", "0", "--per-env", "1", "--epochs", "4", "--batch", "3", "--lr", "3e-3"]);
    let losses: Vec<f64> = m["epoch_loss"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(losses.len(), 4);
    assert!(losses[3] < 0.8 * losses[0], "training loss per token {losses:?}");
    assert_eq!(m["train_pairs"], 3);
    assert_eq!(m["config"]["lr_schedule"], "cosine");
    assert_eq!(m["held_out_loss_by_epoch"].as_array().unwrap().len(), 4);
    // The checkpoint starts self-play afresh and loads as a model.
    let state: Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("warm/trainer_state.json")).unwrap()).unwrap();
    assert_eq!(state["step"], 0);
    assert_eq!(state["optimizer_steps"], 0);
    assert!(state["initial_model"].as_str().unwrap().ends_with("warm"));
    spade_model::load(&d.path().join("warm"), &Device::Cpu).unwrap();
    let card = std::fs::read_to_string(d.path().join("warm/README.md")).unwrap();
    assert!(card.contains("- spade-sft\n") && card.contains("| `train_pairs` | 3 |"), "{card}");
}

#[test]
fn favoured_environments_get_more_documents() {
    let d = tmp();
    let model = tiny_model(&d.path().join("m"), 35, 4096);
    let coin = root().join("tests/data/round-seeds/coin.py");
    let flags = ["--held-out", "0", "--per-env", "1", "--epochs", "1", "--batch", "5", "--favour", coin.to_str().unwrap(), "--favour-per-env", "3"];
    let m = sft(d.path(), &model, &flags);
    assert_eq!((m["train_pairs"].as_u64(), m["favoured_train_envs"].as_u64()), (Some(5), Some(1)), "{m}");
    let mut per_env = std::collections::BTreeMap::<String, usize>::new();
    for p in m["train_pair_ids"].as_array().unwrap() {
        *per_env.entry(p[0].as_str().unwrap().to_string()).or_default() += 1;
    }
    let mut counts: Vec<usize> = per_env.values().copied().collect();
    counts.sort();
    assert_eq!(counts, [1, 1, 3], "coin.py with 3 documents, the others with 1: {per_env:?}");
    // Each needs the other.
    let err = sft_cmd(d.path(), &model, &["--favour", coin.to_str().unwrap()]).assert().code(2);
    assert!(String::from_utf8_lossy(&err.get_output().stderr).contains("--favour-per-env"));
}

#[test]
fn held_out_environments_and_documents_never_reach_training() {
    let d = tmp();
    let model = tiny_model(&d.path().join("m"), 33, 4096);
    let split = d.path().join("split.json");
    let held_docs = d.path().join("held.jsonl");
    let m = sft(
        d.path(),
        &model,
        &["--held-out", "0.4", "--epochs", "1", "--split", split.to_str().unwrap(), "--held-out-docs", held_docs.to_str().unwrap()],
    );
    let s: Value = serde_json::from_str(&std::fs::read_to_string(&split).unwrap()).unwrap();
    let set = |k: &str| s[k].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect::<HashSet<_>>();
    let (te, he, td, hd) = (set("train_envs"), set("held_out_envs"), set("train_docs"), set("held_out_docs"));
    assert!(!he.is_empty() && !hd.is_empty() && !te.is_empty() && !td.is_empty(), "{s}");
    assert!(te.is_disjoint(&he) && td.is_disjoint(&hd));
    for p in m["train_pair_ids"].as_array().unwrap() {
        let (e, doc) = (p[0].as_str().unwrap(), p[1].as_str().unwrap());
        assert!(te.contains(e) && td.contains(doc), "pair {p} uses a held-out item");
    }
    let written: HashSet<String> = read_jsonl(&held_docs).iter().map(|r| r["doc_id"].as_str().unwrap().to_string()).collect();
    assert_eq!(written, hd, "the held-out documents table");
    assert!(m["held_out_loss_before"].as_f64().unwrap() > 0.0);

    // A continued warm-up with a new --seed keeps the split with --split-seed (the default seed is 0);
    // without it, this seed splits differently.
    let split_of = |extra: &[&str]| {
        let path = d.path().join("split2.json");
        sft(d.path(), &model, &[&["--held-out", "0.4", "--epochs", "1", "--seed", "3", "--split", path.to_str().unwrap()], extra].concat());
        serde_json::from_str::<Value>(&std::fs::read_to_string(&path).unwrap()).unwrap()
    };
    assert_eq!(split_of(&["--split-seed", "0"]), s);
    assert_ne!(split_of(&[]), s, "seed 3 should split these items differently");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let d = tmp();
    let docs_path = d.path().join("docs.jsonl");
    std::fs::write(&docs_path, "{\"doc_id\": \"a\"}\n").unwrap();
    let out = stage("spade-sft")
        .args(["--pool", "tests/data/round-seeds", "--docs"])
        .arg(&docs_path)
        .arg("-o")
        .arg(d.path().join("w"))
        .current_dir(root())
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("text") && err.trim().lines().count() == 1, "{err}");
    assert!(!d.path().join("w").exists());
}
