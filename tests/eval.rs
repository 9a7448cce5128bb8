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
    assert_eq!(suites, ["aime24", "aime25", "humaneval", "math500", "rg:algorithmic", "rg:cognition", "rg:logic", "rg:math"]);
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
    eval(&["--suite", ALL, "--n", "2", "--samples", "3", "--responses", resp.to_str().unwrap(), "-o", out.to_str().unwrap()]).success();
    let json_out = d.path().join("wrong.jsonl");
    // Read the Parquet back through the JSONL writer of another run is not needed: check with pyarrow.
    let script = format!("import pyarrow.parquet as pq, json\nfor r in pq.read_table('{}').to_pylist(): print(json.dumps(r))", out.display());
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
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("wrong.parquet.summary.json")).unwrap()).unwrap();
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
        eval(&["--suite", "rg:math,humaneval", "--n", "3", "--self-check", "--shard", &shard, "-o", out.to_str().unwrap()]).success();
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
    let a = eval(&["--suite", "rg:math", "--n", "2", "--responses", resp.to_str().unwrap(), "-o", out.to_str().unwrap()]).code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(err.contains("r.jsonl") && err.contains("row 2") && err.contains("item_id") && err.contains("gcd/99"), "{err}");
    assert!(!out.exists());
}

#[test]
fn unknown_suites_are_clear_errors() {
    let d = tmp();
    let out = d.path().join("o.jsonl");
    let a = eval(&["--suite", "gsm8k", "--self-check", "-o", out.to_str().unwrap()]).code(2);
    assert!(String::from_utf8_lossy(&a.get_output().stderr).contains("unknown suite `gsm8k`"));
    assert!(!out.exists());
}

#[test]
fn bfcl_ground_truth_transcripts_score_one_and_cut_empty_or_wrong_ones_zero() {
    let d = tmp();
    let rows = self_check(d.path(), "bfcl-mt", "2");
    let tasks: BTreeSet<&str> = rows.iter().map(|r| r["task"].as_str().unwrap()).collect();
    assert_eq!(tasks, BTreeSet::from(["multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param"]));
    assert_eq!(rows.len(), 6);
    let mut responses = Vec::new();
    for r in &rows {
        assert_eq!((r["score"].as_f64(), r["status"].as_str()), (Some(1.0), Some("ok")), "{r}");
        // The functions are in the system prompt; the first user turn follows.
        assert!(r["prompt"].as_str().unwrap().contains("\"name\""), "{r}");
        let turns: Vec<Value> = serde_json::from_str(r["response"].as_str().unwrap()).unwrap();
        let truth: Vec<Value> = serde_json::from_str(r["answer"].as_str().unwrap()).unwrap();
        assert_eq!(turns.len(), truth.len());
        let empty: Vec<Value> = turns.iter().map(|_| json!([])).collect();
        let cut = &turns[..turns.len() - 1];
        let mut first_skipped = turns.clone();
        let t = first_skipped.iter().position(|t| !t.as_array().unwrap().is_empty()).unwrap();
        first_skipped[t] = json!([]);
        let wrong = [(0, String::new()), (1, json!(empty).to_string()), (2, json!(cut).to_string()), (3, json!(first_skipped).to_string())];
        for (sample, resp) in wrong {
            responses.push(json!({"suite": "bfcl-mt", "task": r["task"], "item_id": r["item_id"], "sample": sample, "response": resp}));
        }
    }
    let resp = d.path().join("responses.jsonl");
    write_jsonl(&resp, &responses);
    let out = d.path().join("wrong.jsonl");
    eval(&["--suite", "bfcl-mt", "--n", "2", "--responses", resp.to_str().unwrap(), "-o", out.to_str().unwrap()]).success();
    let scored = read_jsonl(&out);
    assert_eq!(scored.len(), responses.len());
    for r in &scored {
        assert_eq!((r["score"].as_f64(), r["status"].as_str()), (Some(0.0), Some("ok")), "{r}");
    }
}

#[test]
fn bfcl_calls_run_in_the_sandbox_on_the_replayed_state() {
    let python = spade_evals::venv_python();
    let items = spade_evals::load_items(&python, &["bfcl-mt".to_string()], 1, 0).unwrap();
    let base = items.iter().find(|i| i.item_id == "multi_turn_base_0").expect("BFCL's first base item");
    crate::util::worker(); // the scorer finds it beside this test binary's folder
    let scorer = spade_evals::Scorer::new(&spade_evals::site_paths(&python).unwrap(), Default::default()).unwrap();
    let step = |executed: &[Vec<String>], reply: &str| scorer.bfcl_step(&base.meta, executed, reply).unwrap();

    let s1 = step(&[], "[cd(folder='document'), mkdir(dir_name='temp')]");
    let calls = s1.calls.clone().unwrap();
    assert_eq!((calls.len(), s1.results.len()), (2, 2), "{s1:?}");
    // Each step runs in a fresh child: the state comes from replaying the executed calls.
    let s2 = step(&[calls], "[ls()]");
    assert!(s2.results[0].contains("temp") && s2.results[0].contains("final_report.pdf"), "{s2:?}");
    let fresh = step(&[], "[ls()]");
    assert!(fresh.results[0].contains("document") && !fresh.results[0].contains("temp"), "{fresh:?}");
    // A reply with no call, and one that cannot be decoded.
    assert_eq!(step(&[], "[]").calls, Some(vec![]));
    let bad = step(&[], "I would move the file.");
    assert!(bad.calls.is_none() && bad.error.is_some(), "{bad:?}");
    // The backends eval() the calls: one that opens a file for writing outside runs in the sandbox.
    let d = tmp();
    let target = d.path().join("written-by-a-model");
    let hostile = step(&[], &format!("[open(file='{}', mode='w')]", target.display()));
    assert_eq!(hostile.calls.map(|c| c.len()), Some(1));
    assert!(!target.exists(), "a model's call wrote outside the sandbox: {:?}", hostile.results);
}

#[test]
fn bfcl_episodes_that_outgrow_the_context_end_unscored() {
    let d = tmp();
    let m = d.path().join("tiny");
    spade_model::write_tiny_model(&m, 3, spade_model::TinySpec::default()).unwrap();
    let out = d.path().join("o.jsonl");
    let args = ["--model", m.to_str().unwrap(), "--suite", "bfcl-mt", "--n", "1", "--max-tokens", "8", "-o", out.to_str().unwrap()];
    let a = eval(&args).success();
    let rows = read_jsonl(&out);
    assert_eq!(rows.len(), 3);
    for r in &rows {
        // BFCL's system prompt (every function's docs) is longer than the tiny model's context.
        assert_eq!((r["score"].as_f64(), r["status"].as_str()), (Some(0.0), Some("context_exceeded")), "{r}");
        assert_eq!(r["response"], "[]");
    }
    let stderr = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(stderr.contains("bfcl-mt"), "{stderr}");
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

#[test]
fn envs_suite_plays_every_environment_of_a_folder_or_table_without_the_hint() {
    let d = tmp();
    let model = crate::util::tiny_model(&d.path().join("tiny"), 5, 4096);
    let folder = d.path().join("heldout");
    std::fs::create_dir_all(&folder).unwrap();
    for f in ["guess.py", "guess3.py"] {
        std::fs::copy(crate::util::root().join("tests/data/rollout").join(f), folder.join(f)).unwrap();
    }
    let suite = format!("envs:{}", folder.display());
    let out = d.path().join("e.jsonl");
    let run = |out: &Path| {
        eval(&[
            "--model",
            model.to_str().unwrap(),
            "--suite",
            &suite,
            "--env-samples",
            "2",
            "--max-turns",
            "2",
            "--max-tokens",
            "4",
            "--temperature",
            "0",
            "--threads",
            "1",
            "-o",
            out.to_str().unwrap(),
        ])
        .success();
        read_jsonl(out)
    };
    let rows = run(&out);
    assert_eq!(rows.len(), 4, "2 environments × 2 samples");
    for r in &rows {
        assert_eq!(r["suite"], json!(suite));
        assert_eq!(r["family"], "envs");
        assert_eq!(r["status"], "ok", "{r}");
        let s = r["score"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&s), "{r}");
        assert!(!r["response"].as_str().unwrap().contains("Hint:"), "played without the hint: {r}");
    }
    let ids: BTreeSet<&str> = rows.iter().map(|r| r["item_id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 2);
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(format!("{}.summary.json", out.display())).unwrap()).unwrap();
    assert!(summary["rows"].as_array().unwrap().iter().any(|r| r["name"] == json!(suite) && r["stderr"].is_number()), "{summary}");
    // The same episodes again (fixed environment seeds, greedy).
    let again = run(&d.path().join("e2.jsonl"));
    let scores = |rs: &[Value]| rs.iter().map(|r| (r["item_id"].to_string(), r["sample"].to_string(), r["score"].to_string())).collect::<Vec<_>>();
    assert_eq!(scores(&rows), scores(&again));
    // Environments are played, not scored from given answers.
    eval(&["--suite", &suite, "--self-check", "-o", d.path().join("x.jsonl").to_str().unwrap()]).code(2);
}

#[test]
fn held_out_environments_are_a_stratified_share_no_seed_pool_contains() {
    let root = crate::util::root();
    let seeds = crate::util::files_in(&root.join("data/seed-envs"));
    let held = crate::util::files_in(&root.join("data/heldout-envs"));
    assert!(held.len() >= 12, "{held:?}");
    let code = |dir: &str, f: &str| std::fs::read_to_string(root.join(dir).join(f)).unwrap();
    let seed_codes: BTreeSet<String> = seeds.iter().map(|f| code("data/seed-envs", f)).collect();
    let mut skills = BTreeSet::new();
    for h in &held {
        assert!(!seeds.contains(h), "{h} is in both folders");
        let c = code("data/heldout-envs", h);
        assert!(!seed_codes.contains(&c), "{h}'s code is in the seed pool");
        skills.insert(c.lines().find_map(|l| l.strip_prefix("# skill:")).unwrap().trim().to_string());
    }
    assert_eq!(skills.len(), 6, "every skill is held out: {skills:?}");
    assert!(held.iter().any(|h| h.starts_with("easy_")), "the easy level too");
    // The split is the script's: running it again moves nothing.
    let out = std::process::Command::new(crate::util::python()).arg(root.join("scripts/split-heldout.py")).arg("--dry-run").output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "", "the committed split is the script's");
}

/// The easy environments written for evaluation only (`data/heldout-easy/`, `EVAL_PRESET=power`):
/// all at the easy level, every skill, in no seed pool or held-out split (by name or by code), and
/// each carries a reference solver, playing from what the agent is shown, that validation requires
/// to win every episode it plays.
#[test]
fn the_evaluation_only_easy_environments_are_new_valid_and_solvable() {
    let root = crate::util::root();
    let easy = crate::util::files_in(&root.join("data/heldout-easy"));
    assert!(easy.len() >= 18, "{easy:?}");
    let (mut names, mut codes) = (BTreeSet::new(), BTreeSet::new());
    for dir in ["data/seed-envs", "data/seed-envs-tool-use", "data/heldout-envs"] {
        for f in crate::util::files_in(&root.join(dir)) {
            codes.insert(std::fs::read_to_string(root.join(dir).join(&f)).unwrap());
            names.insert(f);
        }
    }
    let mut skills = BTreeSet::new();
    for f in &easy {
        let c = std::fs::read_to_string(root.join("data/heldout-easy").join(f)).unwrap();
        assert!(f.starts_with("easy_") && !names.contains(f) && !codes.contains(&c), "{f} is not new at the easy level");
        assert!(c.lines().any(|l| l.trim() == spade_sandbox::validate::SOLVER_MARKER), "{f} has no reference solver");
        skills.insert(c.lines().find_map(|l| l.strip_prefix("# skill:")).unwrap().trim().to_string());
    }
    assert_eq!(skills.len(), 6, "every skill: {skills:?}");
    let d = tmp();
    let (envs, rej) = (d.path().join("envs.jsonl"), d.path().join("rejects.jsonl"));
    stage("spade-validate")
        .arg(root.join("data/heldout-easy"))
        .arg("-o")
        .arg(&envs)
        .arg("--rejects")
        .arg(&rej)
        .args(["--require-solver", "--solver-seeds", "8", "--jobs", "2"])
        .assert()
        .success();
    let (envs, rej) = (read_jsonl(&envs), read_jsonl(&rej));
    assert_eq!((envs.len(), rej.len()), (easy.len(), 0), "{rej:?}");
    assert!(envs.iter().all(|e| e["solver_wins"] == 8), "every solver wins every episode");
}
