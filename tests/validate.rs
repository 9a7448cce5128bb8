//! `spade-validate`: every row lands in exactly one output; the checks (hint leak, determinism,
//! duplicates, reward range, termination, interface); folder pools; errors.

use std::path::Path;

use crate::util::*;

fn fixture(name: &str) -> String {
    std::fs::read_to_string(root().join("tests/data/sandbox").join(name)).unwrap()
}

/// Run validate on a JSONL candidates file; returns (envs, rejects).
fn validate(dir: &Path, rows: &[serde_json::Value], extra: &[&str]) -> (Vec<serde_json::Value>, Vec<serde_json::Value>) {
    let input = dir.join("candidates.jsonl");
    write_jsonl(&input, rows);
    let (envs, rej) = (dir.join("envs.jsonl"), dir.join("rejects.jsonl"));
    stage("spade-validate")
        .arg(&input)
        .arg("-o")
        .arg(&envs)
        .arg("--rejects")
        .arg(&rej)
        .args(["--jobs", "2", "--call-timeout", "2", "--load-timeout", "4"])
        .args(extra)
        .assert()
        .success();
    (read_jsonl(&envs), read_jsonl(&rej))
}

fn by_id<'a>(rows: &'a [serde_json::Value], id: &str) -> Option<&'a serde_json::Value> {
    rows.iter().find(|r| r["candidate_id"] == id)
}

fn cand(id: &str, code: &str, hint: &str) -> serde_json::Value {
    serde_json::json!({"candidate_id": id, "code": code, "hint": hint, "skill": "test", "setting": "games", "round": 3})
}

#[test]
fn every_row_lands_in_exactly_one_output_with_the_right_reason() {
    let d = tmp();
    let counter = fixture("clean/counter.py");
    let near = counter
        .replace("Guess the next number in a seeded arithmetic sequence.", "Next number, please.")
        .replace("# hint: Count upwards from the start value.", "# hint: something else");
    let rows = vec![
        cand("ok", &counter, "Look at the gaps between numbers."),
        cand("exact-dup", &counter, "another hint"),
        cand("near-dup", &near, "Look at the gaps."),
        cand("wordle", &fixture("clean/wordle.py"), "Use the feedback."),
        serde_json::json!({"candidate_id": "tool", "code": fixture("clean/toolcall.py"), "hint": "Check first.", "setting": "tool-use"}),
        cand("leak-word", &fixture("validate/pick_fruit.py"), "It is the pineapple, obviously."),
        cand("leak-action", &fixture("validate/secret_code.py"), "\\boxed{7391}"),
        cand("no-leak", &fixture("validate/secret_code.py").replace("class SecretCodeEnv", "class SafeCodeEnv"), "Digits are distinct."),
        cand("nondet", &fixture("validate/nondeterministic.py"), ""),
        cand("endless", &fixture("validate/endless.py"), ""),
        cand("two", &fixture("validate/two_classes.py"), ""),
        cand("syntax", "class E:\n  def reset(self\n", ""),
        serde_json::json!({"candidate_id": "empty", "code": null, "hint": "x"}),
        cand(
            "busy",
            "class BusyEnv:\n def reset(self, seed=None):\n  while True: pass\n def step(self, a):\n  return 'x', 0.0, True, False, {}\n",
            "",
        ),
        cand("nan", &fixture("adversarial/nan_reward.py"), ""),
        serde_json::json!({"candidate_id": "final", "code": "this is not python", "final_code": fixture("validate/reference_style.py"), "hint": null}),
        // Any action wins half the time, the empty one too: that is no leak of the hint.
        cand("any-wins", &std::fs::read_to_string(root().join("tests/data/round-seeds/coin.py")).unwrap(), "Pure chance; pick a side."),
    ];
    // (a fixed salt: the coin wins about half its seeds whatever the reply, so with a random one
    // all five fresh seeds win, and it is rejected as trivial, once in 32 runs)
    let (envs, rej) = validate(d.path(), &rows, &["--probe-seed", "3"]);
    assert_eq!(envs.len() + rej.len(), rows.len(), "envs {envs:#?}\nrejects {rej:#?}");
    for r in &rows {
        let id = r["candidate_id"].as_str().unwrap();
        let n = envs.iter().chain(&rej).filter(|x| x["candidate_id"] == id).count();
        assert_eq!(n, 1, "{id} appears {n} times");
    }
    let stage_of = |id: &str| {
        let r = by_id(&rej, id).unwrap_or_else(|| panic!("{id} not rejected; rejects: {rej:#?}"));
        (r["stage"].as_str().unwrap().to_string(), r["error"].as_str().unwrap().to_string())
    };
    for id in ["ok", "wordle", "tool", "no-leak", "final", "any-wins"] {
        assert!(by_id(&envs, id).is_some(), "{id} should pass: {:?}", by_id(&rej, id));
    }
    assert_eq!(stage_of("exact-dup").0, "duplicate");
    assert!(stage_of("exact-dup").1.contains("exact duplicate of ok"), "{}", stage_of("exact-dup").1);
    assert_eq!(stage_of("near-dup").0, "duplicate");
    assert!(stage_of("near-dup").1.contains("near duplicate of ok"), "{}", stage_of("near-dup").1);
    assert_eq!(stage_of("leak-word").0, "hint-leak");
    assert_eq!(stage_of("leak-action").0, "hint-leak");
    assert_eq!(stage_of("nondet").0, "determinism");
    assert_eq!(stage_of("endless").0, "termination");
    assert_eq!(stage_of("two").0, "interface");
    assert_eq!(stage_of("syntax").0, "syntax");
    assert_eq!(stage_of("empty").0, "parse");
    assert_eq!(stage_of("busy").0, "probe");
    assert_eq!(by_id(&rej, "busy").unwrap()["status"], "timeout");
    assert_eq!(stage_of("nan").0, "range");
    // validity grows with the stage reached
    let v = |id: &str| by_id(&rej, id).unwrap()["validity"].as_f64().unwrap();
    assert!(v("empty") < v("syntax") && v("syntax") < v("two") && v("two") < v("busy"));
    assert!(v("busy") < v("endless") && v("endless") < v("nondet") && v("nondet") < v("leak-word"));
    assert!(rej.iter().all(|r| (0.0..1.0).contains(&r["validity"].as_f64().unwrap())));
    // carried columns, env_id of the code that was run, final_code preferred
    let ok = by_id(&envs, "ok").unwrap();
    assert_eq!(ok["round"], 3);
    assert_eq!(ok["env_id"].as_str().unwrap().len(), 16);
    assert_eq!(ok["class_name"], "CounterEnv");
    let fin = by_id(&envs, "final").unwrap();
    assert_eq!(fin["class_name"], "HiddenSumEnv");
    assert_eq!(fin["final_code"], fin["code"]);
    assert_eq!(by_id(&rej, "syntax").unwrap()["skill"], "test");
    assert!(by_id(&rej, "empty").unwrap().get("env_id").is_none_or(|v| v.is_null()));
}

#[test]
fn reward_range_flag_is_honoured() {
    let d = tmp();
    let rows = vec![cand("big", &fixture("validate/big_reward.py"), "")];
    let (envs, rej) = validate(d.path(), &rows, &[]);
    assert_eq!((envs.len(), rej.len()), (1, 0), "5.0 is inside the default [-10, 10]");
    let (envs, rej) = validate(d.path(), &rows, &["--reward-range", "0,1"]);
    assert_eq!((envs.len(), rej.len()), (0, 1));
    assert_eq!(rej[0]["stage"], "range");
    assert!(rej[0]["error"].as_str().unwrap().contains("outside [0, 1]"), "{}", rej[0]["error"]);
}

#[test]
fn reference_style_env_validates_unchanged() {
    let d = tmp();
    let rows = vec![cand("ref", &fixture("validate/reference_style.py"), "Carry the tens.")];
    let (envs, rej) = validate(d.path(), &rows, &[]);
    assert_eq!(envs.len(), 1, "{rej:#?}");
    assert_eq!(envs[0]["class_name"], "HiddenSumEnv");
}

#[test]
fn folder_of_seed_envs_validates() {
    let d = tmp();
    let seeds = root().join("data/seed-envs");
    let has_seeds = seeds.is_dir() && std::fs::read_dir(&seeds).unwrap().flatten().any(|e| e.path().extension().is_some_and(|x| x == "py"));
    let folder = if has_seeds { seeds } else { root().join("tests/data/sandbox/clean") };
    let n = std::fs::read_dir(&folder).unwrap().flatten().filter(|e| e.path().extension().is_some_and(|x| x == "py")).count();
    let (envs, rej) = (d.path().join("envs.parquet"), d.path().join("rejects.jsonl"));
    stage("spade-validate").arg(&folder).arg("-o").arg(&envs).arg("--rejects").arg(&rej).args(["--jobs", "2"]).assert().success();
    let rejects = read_jsonl(&rej);
    assert!(rejects.is_empty(), "seed environments rejected: {rejects:#?}");
    // read the Parquet output back
    let f = std::fs::File::open(&envs).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap().build().unwrap();
    let rows: usize = reader.map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(rows, n);
    // skill, setting and hint come from the header comments
    let (envs_j, _) = {
        let e = d.path().join("e.jsonl");
        stage("spade-validate").arg(&folder).arg("-o").arg(&e).arg("--rejects").arg(&rej).assert().success();
        (read_jsonl(&e), ())
    };
    for e in &envs_j {
        assert!(e["skill"].is_string() && e["hint"].is_string(), "{e}");
        assert!(e["setting"] == "games" || e["setting"] == "tool-use");
        assert!(e["source"].as_str().unwrap().ends_with(".py"));
    }
}

#[test]
fn all_rejected_and_empty_input_are_normal_outcomes() {
    let d = tmp();
    let (envs, rej) = validate(d.path(), &[cand("x", "def f(:\n", "")], &[]);
    assert_eq!((envs.len(), rej.len()), (0, 1));
    let (envs, rej) = validate(d.path(), &[], &[]);
    assert_eq!((envs.len(), rej.len()), (0, 0));
    // an empty Parquet output still has the full schema
    let input = d.path().join("none.jsonl");
    std::fs::write(&input, "").unwrap();
    let out = d.path().join("envs.parquet");
    stage("spade-validate").arg(&input).arg("-o").arg(&out).arg("--rejects").arg(d.path().join("r.parquet")).assert().success();
    let f = std::fs::File::open(&out).unwrap();
    let b = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f).unwrap();
    for c in ["env_id", "code", "hint", "skill", "setting", "candidate_id"] {
        assert!(b.schema().field_with_name(c).is_ok(), "{c} missing from the empty envs table");
    }
}

#[test]
fn bad_input_is_a_one_line_error_naming_the_file() {
    let d = tmp();
    let no_code = d.path().join("nocode.jsonl");
    write_jsonl(&no_code, &[serde_json::json!({"hint": "x"})]);
    let broken = d.path().join("broken.jsonl");
    std::fs::write(&broken, "{\"code\": \"x\"\nnot json\n").unwrap();
    let missing = d.path().join("missing.parquet");
    for (input, extra) in [(&no_code, vec![]), (&broken, vec![]), (&missing, vec![]), (&no_code, vec!["--reward-range", "1,0"])] {
        let out = stage("spade-validate")
            .arg(input)
            .arg("-o")
            .arg(d.path().join("e.jsonl"))
            .arg("--rejects")
            .arg(d.path().join("r.jsonl"))
            .args(&extra)
            .assert()
            .code(2)
            .get_output()
            .clone();
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(lines.len(), 1, "{err}");
        if extra.is_empty() {
            assert!(lines[0].contains(input.file_name().unwrap().to_str().unwrap()), "{err}");
        } else {
            assert!(lines[0].contains("--reward-range"), "{err}");
        }
    }
    assert!(!d.path().join("e.jsonl").exists(), "no output on error");
    // a model that is not there: refused before any environment runs
    let ok = d.path().join("ok.jsonl");
    write_jsonl(&ok, &[cand("ok", &fixture("clean/counter.py"), "Look at the gaps.")]);
    let out = stage("spade-validate")
        .arg(&ok)
        .arg("-o")
        .arg(d.path().join("e.jsonl"))
        .arg("--rejects")
        .arg(d.path().join("r.jsonl"))
        .args(["--model", "/nonexistent/agent.gguf", "--progress", "off", "-v"])
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
    assert!(lines.len() == 1 && lines[0].contains("/nonexistent/agent.gguf"), "{err}");
    assert!(!err.contains("sandbox layers"), "no sandbox was started: {err}");
    assert!(!d.path().join("e.jsonl").exists(), "no output on error");
}

#[test]
fn copies_of_known_environments_are_duplicates() {
    let d = tmp();
    let seeds = root().join("data/seed-envs");
    let seed = std::fs::read_to_string(seeds.join("math_linear_equation.py")).unwrap();
    // The same class under other header comments: a near duplicate (comments do not count).
    let reheaded = seed.replacen("# skill: mathematical-reasoning", "# skill: logical-deduction", 1);
    let counter = fixture("clean/counter.py");
    let rows = vec![
        cand("copy", &seed, "Isolate x."),
        cand("reheaded", &reheaded, "Isolate x."),
        cand("new", &counter, "Look at the gaps between numbers."),
    ];
    let known = seeds.display().to_string();
    let (envs, rej) = validate(d.path(), &rows, &["--known", &known]);
    assert_eq!(envs.len(), 1, "{rej:#?}");
    assert!(by_id(&envs, "new").is_some());
    for id in ["copy", "reheaded"] {
        let r = by_id(&rej, id).unwrap();
        assert_eq!(r["stage"], "duplicate");
        assert!(r["error"].as_str().unwrap().contains("known environment"), "{}", r["error"]);
    }
    // Without --known both copies pass.
    let d2 = tmp();
    let (envs, _) = validate(d2.path(), &rows[..1], &[]);
    assert_eq!(envs.len(), 1);
}

/// `--require-solver`: an environment is kept only when its reference solver, which sees only the
/// observations in a process of its own, wins every solver episode. A solvable environment passes
/// (solved on every seed); one whose answer is a hidden random number is rejected as unsolvable; a
/// solver that reaches for the environment's hidden state finds no environment in its process; an
/// environment without a solver is rejected. Without the flag the solvers are still played and
/// recorded, and the metrics give the share of valid environments with a winning solver.
#[test]
fn reference_solvers_are_played_apart_and_required_on_request() {
    let d = tmp();
    let dir = root().join("tests/data/solver");
    let no_solver = root().join("tests/data/round-seeds/coin.py");
    let run = |out: &str, extra: &[&str]| -> (Vec<serde_json::Value>, Vec<serde_json::Value>, serde_json::Value) {
        let (envs, rej, m) =
            (d.path().join(format!("{out}-envs.jsonl")), d.path().join(format!("{out}-rejects.jsonl")), d.path().join(format!("{out}.jsonl")));
        stage("spade-validate")
            .arg(&dir)
            .arg(&no_solver)
            .arg("-o")
            .arg(&envs)
            .arg("--rejects")
            .arg(&rej)
            // (a fixed salt: see every_row_lands_in_exactly_one_output_with_the_right_reason)
            // (both hidden-answer environments are `undetermined` too: see
            // an_answer_the_observation_does_not_fix_is_rejected)
            .args(["--jobs", "2", "--probe-seed", "3", "--allow-undetermined", "--metrics", m.to_str().unwrap()])
            .args(extra)
            .assert()
            .success();
        (read_jsonl(&envs), read_jsonl(&rej), read_jsonl(&m).pop().unwrap())
    };
    let src = |r: &serde_json::Value| r["source"].as_str().unwrap().to_string();

    let (envs, rej, m) = run("plain", &[]);
    assert_eq!(envs.iter().map(src).collect::<Vec<_>>(), ["hidden.py", "peek.py", "sum.py", "coin.py"], "{rej:?}");
    let row = |name: &str| envs.iter().find(|r| src(r) == name).unwrap().clone();
    assert_eq!((row("sum.py")["solver_episodes"].as_i64(), row("sum.py")["solver_wins"].as_i64()), (Some(3), Some(3)));
    assert!(row("hidden.py")["solver_wins"].as_i64().unwrap() < 3);
    assert_eq!(row("peek.py")["solver_wins"], 0);
    assert!(row("coin.py")["solver"].is_null() && row("coin.py")["solver_episodes"].is_null());
    // The environment is the code before the marker: no solver in `code`, and env_id hashes it.
    assert!(!row("sum.py")["code"].as_str().unwrap().contains("def solve") && row("sum.py")["solver"].as_str().unwrap().contains("def solve"));
    assert_eq!(m["solver"]["candidates_with_solver"], 3);
    assert_eq!(m["solver"]["valid_with_winning_solver"], 1);
    assert_eq!(m["solver"]["winning_solver_share"], 0.25);

    let (envs, rej, m) = run("required", &["--require-solver", "--solver-seeds", "4"]);
    assert_eq!(envs.iter().map(src).collect::<Vec<_>>(), ["sum.py"]);
    assert_eq!(envs[0]["solver_wins"], 4);
    let why = |name: &str| {
        rej.iter().find(|r| src(r) == name).map(|r| (r["stage"].as_str().unwrap().to_string(), r["error"].as_str().unwrap().to_string())).unwrap()
    };
    let (stage_h, err_h) = why("hidden.py");
    assert_eq!(stage_h, "solver");
    assert!(err_h.contains("not determined by what the agent is shown"), "{err_h}");
    let (_, err_p) = why("peek.py");
    assert!(err_p.contains("solve() at turn 0") && err_p.contains("IndexError"), "the solver's process holds no environment: {err_p}");
    let (stage_c, err_c) = why("coin.py");
    assert_eq!(stage_c, "solver");
    assert!(err_c.contains("no reference solver"), "{err_c}");
    assert_eq!(rej.iter().find(|r| src(r) == "hidden.py").unwrap()["validity"], 0.85);
    assert_eq!(m["solver"]["winning_solver_share"], 0.25);
}

/// An environment whose answer changes with the seed while its first observation does not, and
/// that answers every wrong reply alike, is rejected as `undetermined` (the round's designs had
/// such: a "what is the odd number?" whose answer is the sum of two hidden draws); one whose wrong
/// guesses get "higher"/"lower", one whose answers can all be tried within its attempts, one
/// where a probe's reply ("look") shows the answer, and one whose seed decides the outcome
/// whatever the reply are kept. `--allow-undetermined` keeps them all.
#[test]
fn an_answer_the_observation_does_not_fix_is_rejected() {
    let d = tmp();
    let file = |p: &str| std::fs::read_to_string(root().join(p)).unwrap();
    let rows = vec![
        cand("hidden", &file("tests/data/solver/hidden.py"), "The number is between 1 and 100."),
        cand("designed", &fixture("undetermined/designed_even_odd.py"), "Divisible by 2 is even."),
        cand("higher-lower", &fixture("undetermined/higher_lower.py"), "Halve the range."),
        cand("two-doors", &fixture("undetermined/two_doors.py"), "Take the other door next."),
        cand("look-first", &fixture("undetermined/ask_then_answer.py"), "Look before you answer."),
        cand("coin", &file("tests/data/round-seeds/coin.py"), "Luck decides; pick either side."),
    ];
    let (envs, rej) = validate(d.path(), &rows, &["--probe-seed", "3"]);
    let ids = |rows: &[serde_json::Value]| rows.iter().map(|r| r["candidate_id"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    assert_eq!(ids(&envs), ["higher-lower", "two-doors", "look-first", "coin"], "rejects: {rej:#?}");
    assert_eq!(ids(&rej), ["hidden", "designed"]);
    for r in &rej {
        let e = r["error"].as_str().unwrap();
        assert_eq!(r["stage"], "undetermined", "{e}");
        assert_eq!(r["validity"], 0.87);
        assert!(e.contains("show the same first observation") && e.contains("does not fix the answer"), "{e}");
    }
    // the answers named are the hidden numbers of seeds 0 and 1, read from the environment's
    // attributes (random.Random(0).randint(1, 100) is 50; of seed 1, 18)
    let e = rej[0]["error"].as_str().unwrap();
    assert!(e.starts_with("seeds 0 and 1 ") && e.contains("but \\boxed{50} wins the first and loses the second, which \\boxed{18} wins"), "{e}");
    let (envs, rej) = validate(d.path(), &rows, &["--probe-seed", "3", "--allow-undetermined"]);
    assert_eq!((envs.len(), rej.len()), (6, 0), "{rej:#?}");
}

/// The seed pool's reference solvers (the files with a `# --- solver ---` section) win every
/// episode of their environments, so `--require-solver` keeps them.
#[test]
fn the_seed_pools_solvers_win() {
    let d = tmp();
    let pool = d.path().join("pool");
    std::fs::create_dir_all(&pool).unwrap();
    let mut n = 0;
    for e in std::fs::read_dir(root().join("data/seed-envs")).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        if text.lines().any(|l| l.trim() == spade_sandbox::validate::SOLVER_MARKER) {
            std::fs::write(pool.join(p.file_name().unwrap()), text).unwrap();
            n += 1;
        }
    }
    assert!(n >= 5, "{n} seed environments with solvers");
    let (envs, rej) = (d.path().join("envs.jsonl"), d.path().join("rejects.jsonl"));
    stage("spade-validate")
        .arg(&pool)
        .arg("-o")
        .arg(&envs)
        .arg("--rejects")
        .arg(&rej)
        .args(["--require-solver", "--solver-seeds", "5", "--jobs", "2"])
        .assert()
        .success();
    assert_eq!((read_jsonl(&envs).len(), read_jsonl(&rej)), (n, vec![]));
}

/// The tool seed environments follow the tool contract (`get_tools`, `execute_tool`, the answer
/// through `step`): they validate, the probes calling their declared tools, and the two that carry
/// reference solvers (tool calls chosen from the observations alone) are solved on every seed.
#[test]
fn the_tool_seed_environments_validate_and_their_solvers_win() {
    let d = tmp();
    let (envs, rej) = (d.path().join("envs.jsonl"), d.path().join("rejects.jsonl"));
    stage("spade-validate")
        .arg(root().join("data/seed-envs-tool-use"))
        .arg("-o")
        .arg(&envs)
        .arg("--rejects")
        .arg(&rej)
        .args(["--solver-seeds", "5", "--jobs", "2"])
        .assert()
        .success();
    let (envs, rej) = (read_jsonl(&envs), read_jsonl(&rej));
    assert_eq!((envs.len(), rej.len()), (6, 0), "{rej:?}");
    let mut skills: Vec<&str> = envs.iter().map(|e| e["skill"].as_str().unwrap()).collect();
    skills.sort();
    let mut want = spade_design::TOOL_USE_SKILLS.to_vec();
    want.sort();
    assert_eq!(skills, want, "one seed per tool-use skill");
    for e in &envs {
        assert_eq!(e["setting"], "tool-use");
        assert!(e["probe_episodes"].as_i64().unwrap() >= 10, "the probes call every declared tool: {e}");
        if !e["solver"].is_null() {
            assert_eq!(e["solver_wins"], 5, "{}", e["source"]);
        }
    }
    assert_eq!(envs.iter().filter(|e| !e["solver"].is_null()).count(), 2);
}

/// A games environment: `obs` is the first observation (a Python expression of `seed`), `body`
/// the step (returns the step tuple; `seed` and `action` are in scope).
fn game(obs: &str, body: &str) -> String {
    format!(
        "import base64\nclass PlayEnv:\n    def reset(self, seed=None):\n        self.seed = seed or 0\n        seed = self.seed\n        return {obs}, {{}}\n    def step(self, action):\n        seed = self.seed\n        {body}\n"
    )
}

/// Validation plays like play: fresh seeds besides the fixed ones, a reply that says nothing must
/// not win, the hint must not be in the first observation in any encoding, and a class must have
/// the interface of its label. Each candidate here passed before these checks.
#[test]
fn validation_plays_like_play() {
    let d = tmp();
    let fair = "return 'done', (1.0 if action.strip() == '\\\\boxed{7}' else 0.0), True, False, {}";
    let hint = "The secret number is seven, 7";
    let parity_q = " even or odd? Answer \\boxed{even} or \\boxed{odd}.";
    let parity_win =
        |answer: &str| format!("return 'done', (1.0 if action.strip() == '\\\\boxed{{' + ({answer}) + '}}' else 0.0), True, False, {{}}");
    let parity_hint = "Even numbers end in 0, 2, 4, 6 or 8; the others are odd.";
    let rows = vec![
        cand("fair", &game("'Pick a number from 1 to 9.'", fair), hint),
        cand("any-reply", &game("'Say anything.'", "return 'yes', 1.0, True, False, {'success': True}"), ""),
        // Says the episode is lost and pays the top return all the same (a designer's environment, 2026-12-07).
        cand("pays-a-loss", &game("'Say anything.'", "return 'Out of attempts', 1.0, True, False, {'success': False}"), ""),
        cand("any-reply-off-fixed", &game("'Say anything.'", &format!("if seed > 2: return 'yes', 1.0, True, False, {{'success': True}}\n        {fair}")), ""),
        cand("range-off-fixed", &game("'Pick a number from 1 to 9.'", &format!("if seed > 2: return 'x', 1e6, True, False, {{}}\n        {fair}")), ""),
        cand("nan-off-fixed", &game("'Pick a number from 1 to 9.'", &format!("if seed > 2: return 'x', float('nan'), True, False, {{}}\n        {fair}")), ""),
        cand("hint-plain", &game(&format!("'Pick a number. ' + {hint:?}"), fair), hint),
        cand("hint-spaced", &game(&format!("'Pick a number. ' + ' '.join({:?}.upper())", hint), fair), hint),
        cand("hint-reversed", &game(&format!("'Pick a number. ' + {hint:?}[::-1]"), fair), hint),
        cand("hint-hex", &game(&format!("'Pick a number. ' + {hint:?}.encode().hex()"), fair), hint),
        cand("hint-base64", &game(&format!("'Pick a number. data=' + base64.b64encode(b'xy' + {hint:?}.encode()).decode()"), fair), hint),
        // A hint may name the options while explaining them: an option right on some seeds only is
        // no leak; the same words leak when one option is the answer on every seed.
        cand("options-named", &game(&format!("'Is ' + str(seed) + {parity_q:?}"), &parity_win("'even' if seed % 2 == 0 else 'odd'")), parity_hint),
        cand("option-fixed", &game(&format!("'Is 4' + {parity_q:?}"), &parity_win("'even'")), parity_hint),
        cand(
            "tools-as-games",
            "class ToolsEnv:\n    def reset(self, seed=None):\n        return 'Use the tools.', {}\n    def get_tools(self):\n        return [{'name': 'peek', 'description': 'look', 'parameters': {'type': 'object', 'properties': {}}}]\n    def execute_tool(self, name, arguments):\n        return 'nothing'\n    def step(self, action):\n        return 'done', 1.0, True, False, {}\n",
            "",
        ),
    ];
    let (envs, rej) = validate(d.path(), &rows, &["--probe-seed", "11"]);
    let stage_of = |id: &str| {
        let r = by_id(&rej, id).unwrap_or_else(|| panic!("{id} not rejected; envs: {envs:#?}"));
        (r["stage"].as_str().unwrap().to_string(), r["error"].as_str().unwrap().to_string())
    };
    assert!(by_id(&envs, "fair").is_some(), "{:?}", by_id(&rej, "fair"));
    assert_eq!(stage_of("any-reply").0, "trivial");
    assert!(stage_of("any-reply").1.contains("rewards any reply"), "{}", stage_of("any-reply").1);
    assert_eq!(stage_of("any-reply-off-fixed").0, "trivial", "caught on the fresh seeds");
    assert_eq!(stage_of("pays-a-loss").0, "trivial", "play's win rates read the return");
    assert_eq!(stage_of("range-off-fixed").0, "range");
    assert_eq!(stage_of("nan-off-fixed").0, "range");
    for (id, how) in
        [("hint-plain", "as written"), ("hint-spaced", "spaced"), ("hint-reversed", "reversed"), ("hint-hex", "hex"), ("hint-base64", "base64")]
    {
        let (stage, error) = stage_of(id);
        assert_eq!(stage, "hint-leak", "{id}: {error}");
        assert!(error.contains("first observation") && error.contains(how), "{id}: {error}");
    }
    assert!(by_id(&envs, "options-named").is_some(), "{:?}", by_id(&rej, "options-named"));
    let (stage, error) = stage_of("option-fixed");
    assert!(stage == "hint-leak" && error.contains("on every probe seed"), "{stage}: {error}");
    assert_eq!(stage_of("tools-as-games").0, "interface");
    assert!(stage_of("tools-as-games").1.contains("label it tool-use"));
    // the trivial check sits between determinism and the hint
    let v = |id: &str| by_id(&rej, id).unwrap()["validity"].as_f64().unwrap();
    assert!(v("any-reply") > 0.7 && v("any-reply") < v("hint-plain"));
    // the same --probe-seed gives the same verdicts
    let (envs2, rej2) = validate(d.path(), &rows, &["--probe-seed", "11"]);
    let key = |rows: &[serde_json::Value]| rows.iter().map(|r| format!("{} {} {}", r["candidate_id"], r["stage"], r["error"])).collect::<Vec<_>>();
    assert_eq!((key(&envs), key(&rej)), (key(&envs2), key(&rej2)));
}

/// With the agent's model, an environment whose first prompt leaves no room for the agent's first
/// reply is rejected (every episode of it would end at max_tokens after 0 turns): a long first
/// observation, a tool schema that fills the context; a short one passes.
#[test]
fn first_prompts_must_fit_the_agents_context() {
    let d = tmp();
    let model = d.path().join("tiny");
    spade_model::write_tiny_model(&model, 7, spade_model::TinySpec::default()).unwrap();
    let long_obs = game("'Count the words. ' + 'word ' * 3000", "return 'done', 0.0, True, False, {}");
    let huge_tools = "class HugeToolsEnv:\n    def reset(self, seed=None):\n        return 'Use the tools.', {}\n    def get_tools(self):\n        return [{'name': 'tool_%d' % i, 'description': 'does thing number %d ' % i * 20, 'parameters': {'type': 'object', 'properties': {}}} for i in range(40)]\n    def execute_tool(self, name, arguments):\n        return 'nothing'\n    def step(self, action):\n        return 'done', 0.0, True, False, {}\n";
    let rows = vec![
        cand("short", &game("'Pick a number from 1 to 9.'", "return 'done', (1.0 if '7' in action else 0.0), True, False, {}"), "Seven."),
        cand("long-observation", &long_obs, ""),
        serde_json::json!({"candidate_id": "huge-tools", "code": huge_tools, "hint": "", "setting": "tool-use"}),
    ];
    let (envs, rej) = validate(d.path(), &rows, &["--model", model.to_str().unwrap(), "--reply-tokens", "64"]);
    assert!(by_id(&envs, "short").is_some(), "{rej:#?}");
    for id in ["long-observation", "huge-tools"] {
        let r = by_id(&rej, id).unwrap_or_else(|| panic!("{id} passed"));
        assert_eq!(r["stage"], "interface", "{r}");
        assert!(r["error"].as_str().unwrap().contains("context of 1024"), "{r}");
    }
    // without --model nothing is counted
    let (envs, _) = validate(d.path(), &rows, &[]);
    assert_eq!(envs.len(), 3);
}

/// An output folder that is full or read-only: the stage ends with one line naming the file,
/// exit 2, and the earlier output of the same name is left as it was (writes are atomic).
#[test]
#[ignore = "mounts small tmpfs folders (root): make test-all"]
fn a_full_or_read_only_output_folder_is_one_line_and_exit_2() {
    let d = tmp();
    let seeds = root().join("data/seed-envs");
    for (name, opts) in [("full", "size=64k"), ("ro", "size=1m")] {
        let dir = d.path().join(name);
        let Some(tmpfs) = mount_tmpfs(&dir, opts) else {
            eprintln!("cannot mount a tmpfs here (not root?): not checked");
            return;
        };
        let earlier = dir.join("envs.parquet");
        std::fs::write(&earlier, b"an earlier output").unwrap();
        if name == "ro" {
            tmpfs.remount("ro");
        }
        let out = stage("spade-validate")
            .arg(&seeds)
            .arg("-o")
            .arg(&earlier)
            .arg("--rejects")
            .arg(dir.join("rejects.jsonl"))
            .args(["--jobs", "2", "--probe-seed", "1", "-q"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{name}: {err}");
        assert!(err.contains(&earlier.display().to_string()), "{name}: the error names the file: {err}");
        let why = if name == "full" { "No space left" } else { "Read-only" };
        assert!(err.contains(why), "{name}: {err}");
        assert_eq!(std::fs::read(&earlier).unwrap(), b"an earlier output", "{name}: the earlier output changed");
    }
}
