//! `spade-design` with a tiny random model: complete, consistent rows (tokens decode to the text,
//! log-probs match re-scoring), memory and document in the prompt within the budget, unparseable
//! responses kept, determinism, ablations, repair turns, bad input.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{json, Value};
use spade_model::{candle_core::Device, Model};

use crate::util::*;

fn tiny(dir: &Path, ctx: usize) -> Model {
    spade_model::load(&tiny_model(dir, 5, ctx), &Device::Cpu).unwrap()
}

fn docs(path: &Path, n: usize, words: usize) {
    let rows: Vec<Value> = (0..n)
        .map(|i| {
            let mut text = vec![format!("STARTDOC{i}")];
            text.extend((0..words).map(|w| format!("lattice{i}w{w}")));
            text.push(format!("ENDDOC{i}"));
            json!({"doc_id": format!("d{i}"), "text": text.join(" "), "domain": "math"})
        })
        .collect();
    write_jsonl(path, &rows);
}

fn design(model_dir: &Path, args: &[&str]) -> assert_cmd::assert::Assert {
    stage("spade-design").arg("--model").arg(model_dir).args(["--progress", "off", "-q"]).args(args).assert()
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect()
}

fn decode(m: &Model, ids: &[u32]) -> String {
    m.tokenizer().decode(ids, false).unwrap()
}

#[test]
fn skills_per_round_rotates_a_window_of_skills() {
    let d = tmp();
    let p = |n: &str| d.path().join(n);
    tiny(&p("m"), 8192);
    docs(&p("docs.jsonl"), 3, 20);
    let skills = ["mathematical-reasoning", "logical-deduction", "spatial-reasoning", "pattern-recognition", "optimisation", "causal-inference"];
    for (round, want) in [(1, [0, 1, 0]), (2, [2, 3, 2]), (4, [0, 1, 0])] {
        let out = p(&format!("c{round}.jsonl"));
        let r = round.to_string();
        design(
            &p("m"),
            &[
                "--docs",
                p("docs.jsonl").to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
                "--max-new-tokens",
                "4",
                "--examples",
                "0",
                "--per-doc",
                "1",
                "--skills-per-round",
                "2",
                "--round",
                &r,
            ],
        )
        .success();
        let got: Vec<String> = read_jsonl(&out).iter().map(|r| r["skill"].as_str().unwrap().to_string()).collect();
        assert_eq!(got, want.map(|k| skills[k].to_string()), "round {round}");
    }
}

#[test]
fn rows_are_complete_and_consistent() {
    let d = tmp();
    let p = |n: &str| d.path().join(n);
    let m = tiny(&p("m"), 8192);
    docs(&p("docs.jsonl"), 3, 40);
    let out = p("c.jsonl");
    design(
        &p("m"),
        &[
            "--docs",
            p("docs.jsonl").to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--per-doc",
            "2",
            "--repr",
            "f32",
            "--temperature",
            "0.8",
            "--max-new-tokens",
            "40",
            "--round",
            "3",
            "--seed",
            "11",
        ],
    )
    .success();
    let rows = read_jsonl(&out);
    assert_eq!(rows.len(), 6);
    let cids: HashSet<&str> = rows.iter().map(|r| r["candidate_id"].as_str().unwrap()).collect();
    assert_eq!(cids.len(), 6, "candidate ids are unique");
    let skills = ["mathematical-reasoning", "logical-deduction", "spatial-reasoning", "pattern-recognition", "optimisation", "causal-inference"];
    let mut scored = 0;
    for (i, r) in rows.iter().enumerate() {
        let doc = i / 2;
        assert_eq!(r["doc_id"], format!("d{doc}"));
        assert_eq!(r["sample"], (i % 2) as u64);
        assert_eq!(r["round"], 3);
        assert_eq!(r["skill"], skills[(doc + 3) % 6], "skills round-robin, shifted by the round");
        assert_eq!(r["setting"], "games");
        assert_eq!(r["policy_version"], 0);
        assert_eq!(r["attempts"], 1);
        assert!((r["temperature"].as_f64().unwrap() - 0.8).abs() < 1e-6);
        // a random model writes no environment: kept, with the reason
        assert!(r["code"].is_null() && r["final_code"].is_null() && r["env_id"].is_null());
        assert!(!r["parse_error"].as_str().unwrap().is_empty());
        // the prompt holds the document and two seed examples of the memory, within the budget
        let prompt = ids(&r["prompt_ids"]);
        assert!(prompt.len() + 40 <= m.context_length());
        let text = decode(&m, &prompt);
        assert!(text.contains(&format!("STARTDOC{doc}")) && text.contains(&format!("ENDDOC{doc}")), "whole document in the prompt");
        assert!(text.contains("Example 1:") && text.contains("Example 2:"), "two memory examples");
        assert!(text.contains(&format!("# skill: {}", skills[(doc + 3) % 6])));
        // tokens decode to the text; log-probs aligned and equal to re-scoring at the same T
        let resp = ids(&r["response_ids"]);
        let lps = floats(&r["response_logprobs"]);
        assert_eq!(resp.len(), lps.len());
        assert!(!resp.is_empty() && resp.len() <= 40);
        let body: &[u32] = if r["finish"] == "eos" { &resp[..resp.len() - 1] } else { &resp };
        assert_eq!(decode(&m, body), r["response_text"].as_str().unwrap());
        let rescored = m.score_vec(&prompt, &resp, 0.8).unwrap();
        for (a, b) in lps.iter().zip(&rescored) {
            assert!((a - b).abs() < 2e-3, "behaviour {a} vs re-scored {b}");
        }
        scored += resp.len();
        assert!(r["hint_response_ids"].is_null() && r["hint_prompt_ids"].is_null());
    }
    assert!(scored > 0);
    // different samples of one document differ
    assert_ne!(rows[0]["response_ids"], rows[1]["response_ids"]);
    assert_eq!(rows[0]["prompt_ids"], rows[1]["prompt_ids"], "a document's samples share their prompt");
}

#[test]
fn same_seed_same_candidates_and_parquet_output() {
    let d = tmp();
    let p = |n: &str| d.path().join(n);
    tiny(&p("m"), 8192);
    docs(&p("docs.jsonl"), 2, 20);
    let run = |out: &str, seed: &str| {
        design(
            &p("m"),
            &[
                "--docs",
                p("docs.jsonl").to_str().unwrap(),
                "-o",
                p(out).to_str().unwrap(),
                "--per-doc",
                "2",
                "--max-new-tokens",
                "24",
                "--seed",
                seed,
            ],
        )
        .success();
    };
    run("a.jsonl", "1");
    run("b.jsonl", "1");
    run("c.jsonl", "2");
    run("a.parquet", "1");
    let (a, b, c) = (read_jsonl(&p("a.jsonl")), read_jsonl(&p("b.jsonl")), read_jsonl(&p("c.jsonl")));
    assert_eq!(a, b);
    assert_ne!(a[0]["candidate_id"], c[0]["candidate_id"]);
    assert_ne!(a[0]["response_ids"], c[0]["response_ids"]);
    // the Parquet output has the candidates schema and the same rows
    let f = std::fs::File::open(p("a.parquet")).unwrap();
    let r = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
    let names: Vec<String> = r.schema().fields().iter().map(|f| f.name().clone()).collect();
    let want: Vec<String> = spade_schema::CANDIDATES.columns.iter().map(|c| c.name.to_string()).collect();
    assert_eq!(names, want);
    let batches: Vec<_> = r.build().unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 4);
}

#[test]
fn ablations_change_the_prompt() {
    let d = tmp();
    let p = |n: &str| d.path().join(n);
    let m = tiny(&p("m"), 8192);
    docs(&p("docs.jsonl"), 1, 20);
    let docs_path = p("docs.jsonl").to_str().unwrap().to_string();
    let out = p("x.jsonl");
    let out_s = out.to_str().unwrap().to_string();
    let prompt_of = |extra: &[&str]| -> (String, Value) {
        let mut a = vec!["--docs", docs_path.as_str(), "-o", out_s.as_str(), "--per-doc", "1", "--max-new-tokens", "8"];
        a.extend_from_slice(extra);
        design(&p("m"), &a).success();
        let r = read_jsonl(&out).remove(0);
        (decode(&m, &ids(&r["prompt_ids"])), r)
    };
    let (full, _) = prompt_of(&[]);
    assert!(full.contains("STARTDOC0") && full.contains("Example 1:"));
    assert!(full.contains("# --- solver ---") && full.contains("def solve(observations)"), "the prompt shows the solver pattern");
    let (nomem, _) = prompt_of(&["--no-memory"]);
    assert!(nomem.contains("STARTDOC0") && !nomem.contains("Example 1:"));
    let (nocorpus, r) = prompt_of(&["--no-corpus"]);
    assert!(!nocorpus.contains("STARTDOC0") && nocorpus.contains("Example 1:"));
    assert!(r["doc_id"].is_null());
    // no documents at all: --groups prompts
    let out = p("g.jsonl");
    design(&p("m"), &["--no-corpus", "--groups", "3", "--per-doc", "1", "--max-new-tokens", "8", "-o", out.to_str().unwrap()]).success();
    assert_eq!(read_jsonl(&out).len(), 3);
    // tool-use has its own templates and examples
    let (tools, r) = prompt_of(&["--setting", "tool-use"]);
    assert!(tools.contains("# setting: tool-use") && tools.contains("JSON") && tools.contains("get_tools(self)") && tools.contains("execute_tool"));
    assert_eq!(r["setting"], "tool-use");
    // and its own skills (the games' six are about reasoning)
    assert!(spade_design::TOOL_USE_SKILLS.contains(&r["skill"].as_str().unwrap()), "{}", r["skill"]);
    // a share of each setting over the round's documents, each with its setting's skills
    let out = p("share.jsonl");
    design(
        &p("m"),
        &["--no-corpus", "--groups", "4", "--per-doc", "1", "--max-new-tokens", "8", "--setting", "games,tool-use", "-o", out.to_str().unwrap()],
    )
    .success();
    let rows = read_jsonl(&out);
    let settings: Vec<&str> = rows.iter().map(|r| r["setting"].as_str().unwrap()).collect();
    assert_eq!(settings, ["games", "tool-use", "games", "tool-use"]);
    for r in &rows {
        let own = if r["setting"] == "tool-use" { spade_design::TOOL_USE_SKILLS } else { spade_design::DEFAULT_SKILLS };
        assert!(own.contains(&r["skill"].as_str().unwrap()), "{r}");
    }
    let a = design(&p("m"), &["--no-corpus", "--groups", "1", "--setting", "chess", "-o", out.to_str().unwrap()]).failure().code(2);
    assert!(String::from_utf8_lossy(&a.get_output().stderr).contains("expected games or tool-use"));
    // --hint self: the designer is not asked for a hint
    let (selfhint, _) = prompt_of(&["--hint", "self"]);
    assert!(full.contains("# hint:") && !selfhint.contains("# hint:"));
}

#[test]
fn memory_table_gives_examples_and_negatives() {
    let d = tmp();
    let p = |n: &str| d.path().join(n);
    let m = tiny(&p("m"), 8192);
    docs(&p("docs.jsonl"), 1, 10);
    let env = |name: &str, skill: &str, label: &str, regret: Option<f64>, wr: f64| {
        json!({"env_id": name, "code": format!("import re\n\nclass {name}Env:\n    def reset(self, seed=None):\n        return 'obs', {{}}\n"),
               "hint": format!("hint of {name}"), "skill": skill, "setting": "games", "label": label, "regret": regret, "nohint_win_rate": wr})
    };
    write_jsonl(
        &p("memory.jsonl"),
        &[
            env("LowRegret", "mathematical-reasoning", "seed", Some(0.1), 0.5),
            env("TopRegret", "mathematical-reasoning", "seed", Some(0.6), 0.4),
            env("MidRegret", "mathematical-reasoning", "seed", Some(0.3), 0.5),
            env("OtherSkill", "optimisation", "seed", Some(0.9), 0.5),
            env("Trivial", "mathematical-reasoning", "too-easy", None, 0.97),
            env("Impossible", "mathematical-reasoning", "too-hard", None, 0.0),
            env("Plain", "mathematical-reasoning", "none", Some(0.99), 0.5),
        ],
    );
    let out = p("c.jsonl");
    design(
        &p("m"),
        &[
            "--docs",
            p("docs.jsonl").to_str().unwrap(),
            "--memory",
            p("memory.jsonl").to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--per-doc",
            "1",
            "--max-new-tokens",
            "8",
        ],
    )
    .success();
    let r = read_jsonl(&out).remove(0);
    assert_eq!(r["skill"], "mathematical-reasoning");
    let text = decode(&m, &ids(&r["prompt_ids"]));
    let pos = |s: &str| text.find(s);
    assert!(pos("Example 1: TopRegretEnv").is_some() && pos("Example 2: MidRegretEnv").is_some(), "highest regret of the skill first");
    assert!(pos("LowRegretEnv").is_none() && pos("OtherSkillEnv").is_none() && pos("PlainEnv").is_none());
    assert!(pos("# hint: hint of TopRegret").is_some());
    assert!(pos("TrivialEnv (mathematical-reasoning): too easy").is_some() && pos("ImpossibleEnv (mathematical-reasoning): too hard").is_some());
}

#[test]
fn the_prompt_is_cut_to_the_budget() {
    let d = tmp();
    let p = |n: &str| d.path().join(n);
    let m = tiny(&p("m"), 6000);
    docs(&p("docs.jsonl"), 1, 600);
    let out = p("c.jsonl");
    // 6000 − 3200 leaves 2800 prompt tokens: not enough for the whole document and two examples
    design(&p("m"), &["--docs", p("docs.jsonl").to_str().unwrap(), "-o", out.to_str().unwrap(), "--per-doc", "1", "--max-new-tokens", "3200"])
        .success();
    let r = read_jsonl(&out).remove(0);
    let prompt = ids(&r["prompt_ids"]);
    assert!(prompt.len() <= 2800, "{} prompt tokens", prompt.len());
    let text = decode(&m, &prompt);
    assert!(text.contains("STARTDOC0"), "the document's start stays");
    assert!(!text.contains("ENDDOC0"), "the document was cut");
    // a budget too small even for the instructions is an error, and no output is written
    let out2 = p("none.jsonl");
    design(&p("m"), &["--docs", p("docs.jsonl").to_str().unwrap(), "-o", out2.to_str().unwrap(), "--max-new-tokens", "5900"])
        .code(2)
        .stderr(predicates::str::contains("tokens"));
    assert!(!out2.exists());
}

#[test]
fn repair_turns_keep_the_first_response() {
    let d = tmp();
    let p = |n: &str| d.path().join(n);
    tiny(&p("m"), 8192);
    docs(&p("docs.jsonl"), 1, 10);
    let (a, b) = (p("a.jsonl"), p("b.jsonl"));
    let args = |out: &Path, repair: &str| {
        vec![
            "--docs".to_string(),
            p("docs.jsonl").to_str().unwrap().into(),
            "-o".into(),
            out.to_str().unwrap().into(),
            "--per-doc".into(),
            "2".into(),
            "--max-new-tokens".into(),
            "16".into(),
            "--repair".into(),
            repair.into(),
        ]
    };
    stage("spade-design").arg("--model").arg(p("m")).args(["-q", "--progress", "off"]).args(args(&a, "0")).assert().success();
    stage("spade-design").arg("--model").arg(p("m")).args(["-q", "--progress", "off"]).args(args(&b, "2")).assert().success();
    let (a, b) = (read_jsonl(&a), read_jsonl(&b));
    for (x, y) in a.iter().zip(&b) {
        // the first attempt is the training sample, unchanged by repair
        for k in ["candidate_id", "prompt_ids", "response_ids", "response_logprobs", "response_text", "parse_error"] {
            assert_eq!(x[k], y[k], "{k}");
        }
        assert_eq!(y["attempts"], 3, "a random model never passes: two repair turns");
        let errs = y["repair_errors"].as_array().unwrap();
        assert_eq!(errs.len(), 2);
        assert!(errs[0].as_str().unwrap().starts_with("parse:"), "{errs:?}");
        assert!(x["repair_errors"].is_null());
    }
}

#[test]
fn bad_input_is_one_line_and_no_output() {
    let d = tmp();
    let p = |n: &str| d.path().join(n);
    tiny(&p("m"), 8192);
    write_jsonl(&p("docs.jsonl"), &[json!({"doc_id": "a", "body": "no text column"})]);
    let out = p("c.jsonl");
    design(&p("m"), &["--docs", p("docs.jsonl").to_str().unwrap(), "-o", out.to_str().unwrap()])
        .code(2)
        .stderr(predicates::str::contains("docs.jsonl").and(predicates::str::contains("text")));
    assert!(!out.exists());
    design(&p("m"), &["-o", out.to_str().unwrap()]).code(2).stderr(predicates::str::contains("--docs is required"));
}

use predicates::prelude::PredicateBooleanExt;
