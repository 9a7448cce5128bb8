//! `spade-regret`: worked numbers through the binary, penalties, memory over two rounds, delayed
//! scoring, resume.

use serde_json::{json, Value};

use crate::util::*;

fn ep(env: &str, arm: &str, ret: f64) -> Value {
    json!({"env_id": env, "arm": arm, "return": ret})
}

fn eps(env: &str, arm: &str, rets: &[f64]) -> Vec<Value> {
    rets.iter().map(|r| ep(env, arm, *r)).collect()
}

fn env(id: &str, skill: &str) -> Value {
    json!({"env_id": id, "code": format!("class {id}Env:\n    pass  # {id}"), "hint": "look closely", "skill": skill, "setting": "games", "candidate_id": format!("c-{id}")})
}

fn by(rows: &[Value], key: &str, id: &str) -> Value {
    rows.iter().find(|r| r[key] == id).unwrap_or_else(|| panic!("no row {key}={id}")).clone()
}

fn close(v: &Value, x: f64) {
    let got = v.as_f64().unwrap_or_else(|| panic!("{v} is not a number"));
    assert!((got - x).abs() < 1e-12, "{got} != {x}");
}

#[test]
fn worked_numbers_penalties_and_one_row_per_candidate() {
    let d = tmp();
    let p = |n: &str| d.path().join(n);
    let mut rollouts = Vec::new();
    // frontier: hint 0.75, no-hint 0.5 → regret 0.25 → 0.4·1 + 0.6·1 = 1.0
    rollouts.extend(eps("frontier", "hint", &[1.0, 1.0, 1.0, 0.0]));
    rollouts.extend(eps("frontier", "nohint", &[1.0, 0.0, 1.0, 0.0]));
    // partial: hint 0.35, no-hint 0.3 → regret 0.05 → 0.4/3 + 0.6·0.6
    rollouts.extend(eps("partial", "hint", &[0.3, 0.4]));
    rollouts.extend(eps("partial", "nohint", &[0.2, 0.4]));
    // leak: hint always wins, no-hint never
    rollouts.extend(eps("leak", "hint", &[1.0, 1.0, 1.0]));
    rollouts.extend(eps("leak", "nohint", &[0.0, 0.0, 0.0]));
    // broken: one episode failed through the environment; infra errors are not its fault
    rollouts.extend(eps("broken", "hint", &[1.0]));
    rollouts.push(json!({"env_id": "broken", "arm": "nohint", "return": 0.0, "status": "exception"}));
    rollouts.push(json!({"env_id": "frontier", "arm": "nohint", "return": 0.0, "status": "infra_error"}));
    write_jsonl(&p("rollouts.jsonl"), &rollouts);
    write_jsonl(&p("envs.jsonl"), &["frontier", "partial", "leak", "broken", "unplayed"].map(|e| env(e, "logic")));
    let mut cands: Vec<Value> = ["frontier", "partial", "leak", "broken", "unplayed"]
        .iter()
        .map(|e| json!({"candidate_id": format!("c-{e}"), "env_id": e, "doc_id": "d1", "skill": "logic"}))
        .collect();
    cands.push(json!({"candidate_id": "c-rejected", "env_id": "r1", "doc_id": "d1", "skill": "logic"}));
    cands.push(json!({"candidate_id": "c-noparse", "env_id": null, "doc_id": "d1", "skill": "logic"}));
    write_jsonl(&p("candidates.jsonl"), &cands);
    write_jsonl(&p("rejects.jsonl"), &[json!({"candidate_id": "c-rejected", "validity": 0.25, "stage": "probe"})]);
    stage("spade-regret")
        .arg(p("rollouts.jsonl"))
        .arg("--envs")
        .arg(p("envs.jsonl"))
        .arg("--candidates")
        .arg(p("candidates.jsonl"))
        .arg("--rejects")
        .arg(p("rejects.jsonl"))
        .args(["--round", "1", "-o"])
        .arg(p("scores.jsonl"))
        .arg("--memory-out")
        .arg(p("memory.jsonl"))
        .arg("--metrics")
        .arg(p("metrics.jsonl"))
        .assert()
        .success();
    let s = read_jsonl(&p("scores.jsonl"));
    assert_eq!(s.len(), 7, "one row per candidate");
    let f = by(&s, "candidate_id", "c-frontier");
    close(&f["hint_win_rate"], 0.75);
    close(&f["nohint_win_rate"], 0.5);
    close(&f["regret"], 0.25);
    close(&f["designer_reward"], 1.0);
    assert_eq!((f["plays_hint"].as_i64(), f["plays_nohint"].as_i64(), f["failures"].as_i64()), (Some(4), Some(4), Some(0)));
    close(&by(&s, "candidate_id", "c-partial")["designer_reward"], 0.4 / 3.0 + 0.36);
    let l = by(&s, "candidate_id", "c-leak");
    assert_eq!(l["reward_kind"], "hint-leak");
    close(&l["designer_reward"], -0.5);
    let b = by(&s, "candidate_id", "c-broken");
    assert_eq!(b["reward_kind"], "env-failure");
    close(&b["designer_reward"], -0.5);
    let r = by(&s, "candidate_id", "c-rejected");
    assert_eq!((r["valid"].as_bool(), r["reward_kind"].as_str()), (Some(false), Some("invalid")));
    close(&r["designer_reward"], -0.75);
    close(&by(&s, "candidate_id", "c-noparse")["designer_reward"], -1.0);
    assert_eq!(by(&s, "candidate_id", "c-unplayed")["reward_kind"], "unplayed");

    let m = read_jsonl(&p("memory.jsonl"));
    assert_eq!(m.len(), 5);
    assert_eq!(by(&m, "env_id", "leak")["label"], "leak");
    assert_eq!(by(&m, "env_id", "broken")["label"], "failing");
    assert_eq!(by(&m, "env_id", "frontier")["label"], "seed");
    assert_eq!(by(&m, "env_id", "unplayed")["label"], "none");

    let metrics = read_jsonl(&p("metrics.jsonl"));
    let mline = &metrics[0];
    assert_eq!(mline["stage"], "spade-regret");
    assert_eq!(mline["rows"], 7);
    assert_eq!(mline["memory"]["size"], 5);
    assert!(mline["memory"]["vendi_per_n"].as_f64().unwrap() > 0.0);
    assert!(mline["per_skill"]["logic"]["regret"]["count"].as_i64().unwrap() >= 3);
    close(&mline["validity_rate"], 5.0 / 7.0);
}

#[test]
fn memory_keeps_plays_per_round_and_scores_the_window() {
    let d = tmp();
    let p = |n: &str| d.path().join(n);
    // Round 0: a pool with no rollouts starts the memory; its environments are seeds.
    write_jsonl(&p("pool.jsonl"), &[env("a", "math"), env("b", "math")]);
    stage("spade-regret")
        .arg("--envs")
        .arg(p("pool.jsonl"))
        .args(["-o"])
        .arg(p("s0.jsonl"))
        .arg("--memory-out")
        .arg(p("m0.parquet"))
        .assert()
        .success();
    let m0 = spade_io::TableReader::open(&[p("m0.parquet").to_str().unwrap()]).unwrap().read_all().unwrap();
    let labels = m0[0].column("label", &arrow::datatypes::DataType::Utf8).unwrap();
    let labels = labels.as_any().downcast_ref::<arrow::array::StringArray>().unwrap();
    assert!(labels.iter().all(|l| l == Some("seed")));

    // Round 1 plays "a" (hint 2/2, no-hint 1/2); round 2 plays it again (hint 1/2, no-hint 0/2).
    write_jsonl(&p("r1.jsonl"), &[eps("a", "hint", &[1.0, 1.0]), eps("a", "nohint", &[1.0, 0.0])].concat());
    write_jsonl(&p("r2.jsonl"), &[eps("a", "hint", &[1.0, 0.0]), eps("a", "nohint", &[0.0, 0.0])].concat());
    stage("spade-regret")
        .arg(p("r1.jsonl"))
        .arg("--memory")
        .arg(p("m0.parquet"))
        .args(["--round", "1", "-o"])
        .arg(p("s1.jsonl"))
        .arg("--memory-out")
        .arg(p("m1.parquet"))
        .assert()
        .success();
    write_jsonl(&p("cands.jsonl"), &[json!({"candidate_id": "c-a", "env_id": "a", "skill": "math"})]);
    let round2 = |window: &str, scores: &str, memory: &str| {
        stage("spade-regret")
            .arg(p("r2.jsonl"))
            .arg("--memory")
            .arg(p("m1.parquet"))
            .arg("--candidates")
            .arg(p("cands.jsonl"))
            .args(["--round", "2", "--window", window, "-o"])
            .arg(p(scores))
            .arg("--memory-out")
            .arg(p(memory))
            .assert()
            .success();
        (read_jsonl(&p(scores)), read_jsonl(&p(memory)))
    };
    // The default window (this round): the delayed candidate is scored from round 2's plays only:
    // hint 1/2, no-hint 0/2 → regret 0.5 → 0.4·1 + 0.6·plateau(0) = 0.4.
    let (s2, m2) = round2("1", "s2.jsonl", "m2.jsonl");
    assert_eq!((s2[0]["plays_hint"].as_i64(), s2[0]["plays_nohint"].as_i64()), (Some(2), Some(2)));
    close(&s2[0]["regret"], 0.5);
    close(&s2[0]["designer_reward"], 0.4);
    let a = by(&m2, "env_id", "a");
    assert_eq!((a["first_round"].as_i64(), a["last_round"].as_i64()), (Some(0), Some(2)));
    close(&a["sum_hint"], 3.0); // lifetime totals are kept
    close(&a["nohint_win_rate"], 0.0);
    assert_eq!(a["label"], "too-hard", "labelled from the current agent's plays");
    let h: Value = serde_json::from_str(a["history"].as_str().unwrap()).unwrap();
    assert_eq!(
        h,
        json!([{"round": 1, "hint": [2, 2.0, 2], "nohint": [2, 1.0, 1], "failures": 0},
                         {"round": 2, "hint": [2, 1.0, 1], "nohint": [2, 0.0, 0], "failures": 0}])
    );
    assert_eq!(by(&m2, "env_id", "b")["label"], "seed", "unplayed seeds stay seeds");
    // --window 0: every play since it entered: hint 3/4, no-hint 1/4 → regret 0.5 → 0.4 + 0.6·plateau(0.25) = 0.64.
    let (s2, m2) = round2("0", "s2-all.jsonl", "m2-all.jsonl");
    assert_eq!((s2[0]["plays_hint"].as_i64(), s2[0]["plays_nohint"].as_i64()), (Some(4), Some(4)));
    close(&s2[0]["regret"], 0.5);
    close(&s2[0]["designer_reward"], 0.64);
    assert_eq!(by(&m2, "env_id", "a")["label"], "seed", "no-hint 1/4 is inside the seed band");
    // --window 2 at round 2 covers rounds 1 and 2: the same plays.
    let (s2, _) = round2("2", "s2-w2.jsonl", "m2-w2.jsonl");
    close(&s2[0]["designer_reward"], 0.64);
    // A round that does not play "a" keeps the measurement of its last round played (round 2).
    stage("spade-regret")
        .arg("--memory")
        .arg(p("m2.jsonl"))
        .arg("--candidates")
        .arg(p("cands.jsonl"))
        .args(["--round", "3", "-o"])
        .arg(p("s3.jsonl"))
        .arg("--memory-out")
        .arg(p("m3.jsonl"))
        .assert()
        .success();
    let s3 = read_jsonl(&p("s3.jsonl"));
    assert_eq!((s3[0]["plays_hint"].as_i64(), s3[0]["plays_nohint"].as_i64()), (Some(2), Some(2)));
    close(&s3[0]["designer_reward"], 0.4);
    assert_eq!(by(&read_jsonl(&p("m3.jsonl")), "env_id", "a")["label"], "too-hard");
    // A bad window is a usage error.
    stage("spade-regret")
        .arg("--memory")
        .arg(p("m2.jsonl"))
        .args(["--window", "-1", "-o"])
        .arg(p("x.jsonl"))
        .arg("--memory-out")
        .arg(p("y.jsonl"))
        .assert()
        .code(2);
}

#[test]
fn repaired_candidates_get_discounted_credit() {
    let d = tmp();
    let p = |n: &str| d.path().join(n);
    // frontier: hint 0.75, no-hint 0.5 → 1.0 for a first-try environment.
    let rollouts = [eps("frontier", "hint", &[1.0, 1.0, 1.0, 0.0]), eps("frontier", "nohint", &[1.0, 0.0, 1.0, 0.0])].concat();
    write_jsonl(&p("rollouts.jsonl"), &rollouts);
    write_jsonl(&p("envs.jsonl"), &[env("frontier", "logic")]);
    let cand = |id: &str, env: Option<&str>, attempts: i64| json!({"candidate_id": id, "env_id": env, "doc_id": "d", "skill": "logic", "attempts": attempts});
    write_jsonl(
        &p("candidates.jsonl"),
        &[cand("c-frontier", Some("frontier"), 1), cand("c-twice", Some("frontier"), 3), cand("c-bad", Some("r"), 2)],
    );
    write_jsonl(&p("rejects.jsonl"), &[json!({"candidate_id": "c-bad", "validity": 0.5})]);
    let score = |extra: &[&str], out: &str| {
        stage("spade-regret")
            .arg(p("rollouts.jsonl"))
            .arg("--envs")
            .arg(p("envs.jsonl"))
            .arg("--candidates")
            .arg(p("candidates.jsonl"))
            .arg("--rejects")
            .arg(p("rejects.jsonl"))
            .args(extra)
            .args(["--round", "1", "-o"])
            .arg(p(out))
            .arg("--memory-out")
            .arg(p("memory.jsonl"))
            .assert()
            .success();
        read_jsonl(&p(out))
    };
    let s = score(&[], "s.jsonl");
    close(&by(&s, "candidate_id", "c-frontier")["designer_reward"], 1.0);
    assert_eq!(by(&s, "candidate_id", "c-frontier")["repairs"], 0);
    // Two repair turns at the default 0.5: 1.0 · 0.5².
    close(&by(&s, "candidate_id", "c-twice")["designer_reward"], 0.25);
    assert_eq!(by(&s, "candidate_id", "c-twice")["repairs"], 2);
    // A penalty is never scaled: −1 · (1 − 0.5).
    close(&by(&s, "candidate_id", "c-bad")["designer_reward"], -0.5);
    let s = score(&["--repair-discount", "1"], "s1.jsonl");
    close(&by(&s, "candidate_id", "c-twice")["designer_reward"], 1.0);
    stage("spade-regret")
        .arg(p("rollouts.jsonl"))
        .args(["--repair-discount", "1.5", "-o"])
        .arg(p("x.jsonl"))
        .arg("--memory-out")
        .arg(p("y.jsonl"))
        .assert()
        .code(2);
    // attempts below 1 is bad input, named by file, row and column.
    write_jsonl(&p("bad.jsonl"), &[cand("c-frontier", Some("frontier"), 0)]);
    let out = stage("spade-regret")
        .arg(p("rollouts.jsonl"))
        .arg("--envs")
        .arg(p("envs.jsonl"))
        .arg("--candidates")
        .arg(p("bad.jsonl"))
        .args(["-o"])
        .arg(p("z.jsonl"))
        .arg("--memory-out")
        .arg(p("w.jsonl"))
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("bad.jsonl") && err.contains("attempts"), "{err}");
    assert!(!p("z.jsonl").exists(), "nothing written on bad input");
}

#[test]
fn resume_rereads_the_memory_identically() {
    let d = tmp();
    let p = |n: &str| d.path().join(n);
    write_jsonl(&p("envs.jsonl"), &[env("a", "x"), env("b", "y")]);
    write_jsonl(&p("r.jsonl"), &[eps("a", "hint", &[1.0, 0.5]), eps("a", "nohint", &[0.5, 0.0]), eps("b", "nohint", &[0.2])].concat());
    stage("spade-regret")
        .arg(p("r.jsonl"))
        .arg("--envs")
        .arg(p("envs.jsonl"))
        .args(["--round", "3", "-o"])
        .arg(p("s.parquet"))
        .arg("--memory-out")
        .arg(p("m.parquet"))
        .assert()
        .success();
    // Reading the memory back with nothing new writes the same memory (the round stamp aside).
    stage("spade-regret")
        .arg("--memory")
        .arg(p("m.parquet"))
        .args(["--round", "3", "-o"])
        .arg(p("s2.parquet"))
        .arg("--memory-out")
        .arg(p("m2.parquet"))
        .assert()
        .success();
    let read = |f: &str| {
        let b = spade_io::TableReader::open(&[p(f).to_str().unwrap()]).unwrap().read_all().unwrap();
        b.into_iter().map(|b| b.batch).collect::<Vec<_>>()
    };
    assert_eq!(read("m.parquet"), read("m2.parquet"));
}

#[test]
fn capacity_evicts_oldest_and_variants_are_selectable() {
    let d = tmp();
    let p = |n: &str| d.path().join(n);
    write_jsonl(&p("envs.jsonl"), &["e1", "e2", "e3"].map(|e| env(e, "s")));
    write_jsonl(&p("r.jsonl"), &[eps("e3", "hint", &[1.0, 1.0]), eps("e3", "nohint", &[1.0, 0.0])].concat());
    stage("spade-regret")
        .arg(p("r.jsonl"))
        .arg("--envs")
        .arg(p("envs.jsonl"))
        .args(["--capacity", "2", "--variant", "solve-rate", "-o"])
        .arg(p("s.jsonl"))
        .arg("--memory-out")
        .arg(p("m.jsonl"))
        .assert()
        .success();
    let m = read_jsonl(&p("m.jsonl"));
    let ids: Vec<_> = m.iter().map(|r| r["env_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["e2", "e3"]);
    let s = read_jsonl(&p("s.jsonl"));
    let e3 = by(&s, "env_id", "e3");
    assert_eq!(e3["reward_kind"], "solve-rate");
    close(&e3["designer_reward"], 1.0); // no-hint 0.5 in the band
    stage("spade-regret")
        .arg(p("r.jsonl"))
        .args(["--variant", "nope", "-o"])
        .arg(p("x.jsonl"))
        .arg("--memory-out")
        .arg(p("y.jsonl"))
        .assert()
        .code(2);
}

#[test]
fn bad_rollouts_are_one_line_errors_and_nothing_is_written() {
    let d = tmp();
    let p = |n: &str| d.path().join(n);
    write_jsonl(&p("bad-arm.jsonl"), &[ep("a", "hint", 1.0), ep("a", "maybe", 1.0)]);
    write_jsonl(&p("no-return.jsonl"), &[json!({"env_id": "a", "arm": "hint"})]);
    for (f, msg) in [
        ("bad-arm.jsonl", "bad-arm.jsonl: row 2: column `arm`: unknown variant `maybe`, expected one of `hint`, `no-hint`, `nohint`"),
        ("no-return.jsonl", "no-return.jsonl: row 1: column `return`: is null for an ok episode"),
    ] {
        let o = stage("spade-regret").arg(p(f)).arg("-o").arg(p("s.parquet")).arg("--memory-out").arg(p("m.parquet")).output().unwrap();
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(msg), "{err}");
        assert_eq!(err.trim_end().lines().count(), 1);
        assert!(!p("s.parquet").exists() && !p("m.parquet").exists());
    }
}

#[test]
fn empty_rollouts_give_empty_scores_with_schema() {
    let d = tmp();
    let p = |n: &str| d.path().join(n);
    std::fs::write(p("r.jsonl"), "").unwrap();
    stage("spade-regret").arg(p("r.jsonl")).arg("-o").arg(p("s.parquet")).arg("--memory-out").arg(p("m.parquet")).assert().success();
    let r = spade_io::TableReader::open(&[p("s.parquet").to_str().unwrap()]).unwrap();
    assert_eq!(r.num_rows(), 0);
    assert!(r.schema().field_with_name("designer_reward").is_ok());
}
