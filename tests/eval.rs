//! `spade-eval`: each suite's wiring checked with known answers — reference answers score 1,
//! empty and wrong answers 0 — scored in the sandbox by the suites' own verifiers; responses of
//! another system; shards; bad input; generation with a tiny model.
//!
//! Reasoning-Gym tasks that store no answer: `propositional_logic` (validity-checked) is
//! answered with the generator's own example answer (`metadata.example_answer`), which its
//! verifier accepts. No task of the fixed lists is left unchecked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{json, Value};

use crate::util::{read_jsonl, stage, tmp, write_jsonl};

const ALL: &str = "rg,humaneval,math500,aime24,aime25";

fn eval(args: &[&str]) -> assert_cmd::assert::Assert {
    stage("spade-eval").args(["--progress", "off"]).args(args).assert()
}

/// Self-check rows: every item answered with its reference.
fn self_check(dir: &Path, suites: &str, n: &str) -> Vec<Value> {
    let out = dir.join("check.jsonl");
    eval(&["--suite", suites, "--n", n, "--self-check", "-o", out.to_str().unwrap()]).success();
    read_jsonl(&out)
}

#[test]
fn reference_answers_score_one_on_every_suite_and_wrong_or_empty_answers_zero() {
    let d = tmp();
    let rows = self_check(d.path(), ALL, "2");
    // Every suite and every task of the fixed Reasoning-Gym lists is there, all scored 1.
    let mut tasks: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in &rows {
        tasks.entry(r["suite"].as_str().unwrap().into()).or_default().insert(r["task"].as_str().unwrap().into());
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["score"], 1.0, "reference answer not accepted: {r}");
    }
    let suites: Vec<&String> = tasks.keys().collect();
    assert_eq!(
        suites,
        ["aime24", "aime25", "humaneval", "math500", "rg:algorithmic", "rg:cognition", "rg:logic", "rg:math"]
    );
    for (family, list) in spade_evals::RG_TASKS {
        let got: Vec<&str> = tasks[&format!("rg:{family}")].iter().map(String::as_str).collect();
        let mut want: Vec<&str> = list.to_vec();
        want.sort();
        assert_eq!(got, want, "{family}");
    }
    assert_eq!(rows.len(), 4 * 6 * 2 + 4 * 2, "one row per item");
    assert!(rows.iter().any(|r| r["task"] == "propositional_logic" && r["answer"].is_null()));

    // The same items answered empty, wrongly, and with a hanging program.
    let mut responses = Vec::new();
    for r in &rows {
        let (suite, task) = (r["suite"].as_str().unwrap(), r["task"].as_str().unwrap());
        let key = json!({"suite": suite, "task": task, "item_id": r["item_id"]});
        let wrong = match suite {
            "humaneval" => "```python\ndef unrelated():\n    return 0\n```".to_string(),
            // propositional_logic checks validity: "zzz" may get partial credit, nothing may not.
            _ if task == "propositional_logic" => "<answer></answer>".to_string(),
            s if s.starts_with("rg:") => "<answer>zzz</answer>".to_string(),
            _ => "So the answer is $\\boxed{-98765}$.".to_string(),
        };
        let mut push = |sample: i64, response: &str| {
            let mut row = key.clone();
            row["sample"] = json!(sample);
            row["response"] = json!(response);
            responses.push(row);
        };
        push(0, "");
        push(1, &wrong);
        if suite == "humaneval" {
            push(2, "```python\nwhile True:\n    pass\n```");
        }
    }
    let resp = d.path().join("responses.jsonl");
    write_jsonl(&resp, &responses);
    let out = d.path().join("wrong.parquet");
    eval(&["--suite", ALL, "--n", "2", "--samples", "3", "--responses", resp.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .success();
    let json_out = d.path().join("wrong.jsonl");
    // Read the Parquet back through the JSONL writer of another run is not needed: check with pyarrow.
    let script = format!(
        "import pyarrow.parquet as pq, json\nfor r in pq.read_table('{}').to_pylist(): print(json.dumps(r))",
        out.display()
    );
    let o = std::process::Command::new(crate::util::python()).args(["-c", &script]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::write(&json_out, &o.stdout).unwrap();
    let scored = read_jsonl(&json_out);
    assert_eq!(scored.len(), responses.len());
    // The verifiers' own format credit: these two Reasoning-Gym scorers give 0.01 to any answer
    // in tags they cannot accept.
    let format_credit = ["fraction_simplification", "color_cube_rotation"];
    for r in &scored {
        let (task, sample, score) = (r["task"].as_str().unwrap(), r["sample"].as_i64().unwrap(), r["score"].as_f64().unwrap());
        if sample == 1 && format_credit.contains(&task) {
            assert_eq!(score, 0.01, "{r}");
        } else {
            assert_eq!(score, 0.0, "{r}");
        }
        if sample == 2 {
            assert_eq!(r["status"], "timeout", "a hanging completion is stopped in the sandbox: {r}");
        } else {
            assert_eq!(r["status"], "ok", "{r}");
        }
    }
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("wrong.parquet.summary.json")).unwrap()).unwrap();
    let he = summary["rows"].as_array().unwrap().iter().find(|r| r["name"] == "humaneval").unwrap();
    assert_eq!((he["items"].as_i64(), he["samples"].as_i64(), he["errors"].as_i64()), (Some(2), Some(6), Some(2)));
    assert_eq!(he["pass_at_k"], 0.0);
}

#[test]
fn summary_counts_items_per_suite_and_family_and_notes_the_math500_subset() {
    let d = tmp();
    let out = d.path().join("check.jsonl");
    let a = eval(&["--suite", "rg:logic,math500", "--n", "3", "--self-check", "-o", out.to_str().unwrap()]).success();
    let stderr = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(stderr.contains("311-problem subset"), "{stderr}");
    let s: Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("check.jsonl.summary.json")).unwrap()).unwrap();
    let rows = s["rows"].as_array().unwrap();
    let find = |level: &str, name: &str| rows.iter().find(|r| r["level"] == level && r["name"] == name).unwrap().clone();
    assert_eq!(find("suite", "rg:logic")["items"], 18);
    assert_eq!(find("suite", "math500")["items"], 3);
    assert!(find("suite", "math500")["note"].as_str().unwrap().contains("311"));
    assert_eq!(find("family", "logic")["mean"], 1.0);
    assert_eq!(find("family", "math")["samples"], 3);
}

#[test]
fn shards_partition_the_items() {
    let d = tmp();
    let mut all = BTreeSet::new();
    let mut total = 0;
    for i in 0..2 {
        let out = d.path().join(format!("s{i}.jsonl"));
        let shard = format!("{i}/2");
        eval(&["--suite", "rg:math,humaneval", "--n", "3", "--self-check", "--shard", &shard, "-o", out.to_str().unwrap()])
            .success();
        for r in read_jsonl(&out) {
            total += 1;
            all.insert(format!("{}/{}/{}", r["suite"], r["task"], r["item_id"]));
        }
    }
    assert_eq!((all.len(), total), (6 * 3 + 3, 6 * 3 + 3));
}

#[test]
fn a_response_for_an_unknown_item_is_a_one_line_error_and_no_output() {
    let d = tmp();
    let resp = d.path().join("r.jsonl");
    write_jsonl(
        &resp,
        &[
            json!({"suite": "rg:math", "task": "gcd", "item_id": "0", "response": "<answer>1</answer>"}),
            json!({"suite": "rg:math", "task": "gcd", "item_id": "99", "response": "<answer>1</answer>"}),
        ],
    );
    let out = d.path().join("o.parquet");
    let a = eval(&["--suite", "rg:math", "--n", "2", "--responses", resp.to_str().unwrap(), "-o", out.to_str().unwrap()])
        .code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(err.contains("r.jsonl") && err.contains("row 2") && err.contains("item_id") && err.contains("gcd/99"), "{err}");
    assert!(!out.exists());
}

#[test]
fn bfcl_multi_turn_and_unknown_suites_are_clear_errors() {
    let d = tmp();
    let out = d.path().join("o.jsonl");
    let a = eval(&["--suite", "bfcl-mt", "--self-check", "-o", out.to_str().unwrap()]).code(2);
    assert!(String::from_utf8_lossy(&a.get_output().stderr).contains("not implemented yet"));
    let a = eval(&["--suite", "gsm8k", "--self-check", "-o", out.to_str().unwrap()]).code(2);
    assert!(String::from_utf8_lossy(&a.get_output().stderr).contains("unknown suite `gsm8k`"));
    assert!(!out.exists());
}

#[test]
fn a_model_answers_every_item_and_each_answer_is_scored() {
    let d = tmp();
    let m = d.path().join("tiny");
    spade_model::write_tiny_model(&m, 3, spade_model::TinySpec::default()).unwrap();
    let out = d.path().join("o.jsonl");
    eval(&[
        "--model",
        m.to_str().unwrap(),
        "--suite",
        "rg:math,aime25",
        "--n",
        "1",
        "--samples",
        "2",
        "--max-tokens",
        "6",
        "-o",
        out.to_str().unwrap(),
    ])
    .success();
    let rows = read_jsonl(&out);
    assert_eq!(rows.len(), (6 + 1) * 2);
    for r in &rows {
        assert_eq!(r["status"], "ok", "{r}");
        let s = r["score"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&s));
        assert_eq!(r["policy_version"], 0);
        assert!(!r["prompt"].as_str().unwrap().is_empty());
    }
    let samples: BTreeSet<i64> = rows.iter().map(|r| r["sample"].as_i64().unwrap()).collect();
    assert_eq!(samples, BTreeSet::from([0, 1]));
}
