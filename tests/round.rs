//! The round end to end, through the Makefile exactly as a user runs it, with a tiny random model
//! on tiny inputs: every table present with consistent row counts and joins, an agent batch and a
//! designer batch trained (a designer group whose rewards differ is arranged by fixing the
//! candidates: half of them replaced by a valid seed environment), weights changed by the
//! gradient, the report written; and `make rounds` killed in the middle of a stage resumes to the
//! same final outputs as an uninterrupted run.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use spade_model::candle_core::Device;

use crate::util::*;

/// Short documents of two domains.
pub(crate) fn corpus(dir: &Path) -> PathBuf {
    let c = dir.join("corpus");
    std::fs::create_dir_all(&c).unwrap();
    write_jsonl(&c.join("docs.jsonl"), &corpus_rows(&[("math", 3), ("code", 3)], 40));
    c
}

/// `make` in the repository root with the binaries `cargo test` built, runs under `runs`, the tiny
/// model and small sizes; `extra` adds or overrides variables and targets.
pub(crate) fn make(runs: &Path, model: &Path, corpus: &Path, extra: &[String]) -> Command {
    let mut c = Command::new("make");
    c.current_dir(root()).arg("--no-print-directory").arg("-s");
    clean_env(&mut c);
    c.arg(format!("RUNS={}", runs.display()));
    c.args(knobs(model, corpus));
    c.args(extra);
    c
}

/// No SPADE_* (but SPADE_PYTHON), MAKE* or RUST_LOG variables of the test's own environment.
pub(crate) fn clean_env(c: &mut Command) {
    for (k, _) in std::env::vars() {
        if k.starts_with("SPADE_") && k != "SPADE_PYTHON" || k.starts_with("MAKE") {
            c.env_remove(k);
        }
    }
    c.env_remove("RUST_LOG");
}

/// The knobs `make` gets: the binaries `cargo test` built, the tiny model and small sizes.
pub(crate) fn knobs(model: &Path, corpus: &Path) -> Vec<String> {
    vec![
        "NO_BUILD=1".to_string(),
        format!("BIN={}", bin_dir().display()),
        format!("MODEL={}", model.display()),
        format!("CORPUS={}", corpus.display()),
        // Seed environments a random policy wins half of the time, so agent groups have variance.
        format!("SEEDS={}", root().join("tests/data/round-seeds").display()),
        "SIZE=2,2,4".into(),
        "POOL=2".into(),
        "THREADS=1".into(),
        // The representation whose log-probs equal the trainer's (the default, auto, is q8_0 on most CPUs).
        "REPR=f32".into(),
        "DESIGN_FLAGS=--max-new-tokens 24 --examples 0 --negatives 0".into(),
        "ROLLOUT_FLAGS=--max-new-tokens 6 --max-turns 2 --progress off".into(),
        "EVAL_SUITES=rg:math".into(),
        "EVAL_N=1".into(),
        "EVAL_FLAGS=--max-tokens 6 --progress off".into(),
        "LR=1e-3".into(),
        "GRPO_FLAGS=--weight-decay 0".into(),
    ]
}

pub(crate) fn run_ok(mut c: Command) {
    let out = c.output().expect("make runs");
    assert!(
        out.status.success(),
        "make failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Rows of a table as JSON objects (via spade-io).
pub(crate) fn rows(path: &Path) -> Vec<Value> {
    let batches = spade_io::TableReader::open(&[path.display().to_string()]).unwrap().read_all().unwrap();
    let mut out = Vec::new();
    for b in batches {
        let rb = &b.batch;
        let mut buf = Vec::new();
        {
            let mut w = arrow::json::LineDelimitedWriter::new(&mut buf);
            w.write(rb).unwrap();
            w.finish().unwrap();
        }
        for l in String::from_utf8(buf).unwrap().lines() {
            out.push(serde_json::from_str(l).unwrap());
        }
    }
    out
}

fn strs(rows: &[Value], col: &str) -> Vec<String> {
    rows.iter().filter_map(|r| r.get(col).and_then(|v| v.as_str()).map(String::from)).collect()
}

/// The candidates of a real (tiny-model) design, with the sample-0 candidate of every document
/// replaced by a valid seed environment, so each designer group has a valid and an invalid member.
fn fixed_candidates(dir: &Path, model: &Path, corpus: &Path) -> PathBuf {
    let runs = dir.join("design-runs");
    let cand = runs.join("design/round-0001/candidates.parquet");
    let mut c = make(&runs, model, corpus, &["RUN=design".into()]);
    c.arg(&cand);
    run_ok(c);
    let out = dir.join("fixed-candidates.parquet");
    let script = r#"
import hashlib, sys
import pyarrow as pa, pyarrow.parquet as pq
src, seed, dst = sys.argv[1:]
t = pq.read_table(src)
code = open(seed).read()
rows = t.to_pylist()
for r in rows:
    if r["sample"] == 0:
        r.update(code=code, final_code=code, parse_error=None, hint="Solve the equation for x.",
                 env_id=hashlib.sha256(code.encode()).hexdigest()[:16])
pq.write_table(pa.Table.from_pylist(rows, schema=t.schema), dst)
"#;
    let seed = root().join("data/seed-envs/math_linear_equation.py");
    let st = Command::new(python()).arg("-c").arg(script).arg(&cand).arg(&seed).arg(&out).status().unwrap();
    assert!(st.success());
    out
}

fn metrics(run: &Path) -> Vec<Value> {
    read_jsonl(&run.join("metrics.jsonl"))
}

#[test]
fn a_round_is_real_end_to_end() {
    let d = tmp();
    let model = tiny_model(&d.path().join("tiny"), 21, 8192);
    let corpus = corpus(d.path());
    let fixed = fixed_candidates(d.path(), &model, &corpus);
    let runs = d.path().join("runs");
    let mut c = make(&runs, &model, &corpus, &["round".into(), "RUN=e2e".into(), format!("CANDIDATES={}", fixed.display())]);
    let out = c.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "make round failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let run = runs.join("e2e");
    let r = run.join("round-0001");
    let s = r.join("step-0");
    assert!(stdout.contains(&format!("{}", run.join("report.html").display())), "where the report is: {stdout}");
    // The stages that run environments say which sandbox layers are in force (CI hosts have them all).
    let stderr = String::from_utf8_lossy(&out.stderr);
    let layers: Vec<&str> = stderr.lines().filter(|l| l.contains("sandbox layers:")).collect();
    assert!(layers.len() >= 2, "validate and rollout: {stderr}");
    assert!(layers.iter().all(|l| l.contains("namespaces=pid+net+ipc+uts+mnt") && l.contains("own /proc")), "{layers:#?}");

    // Every table, with consistent counts and joins.
    let docs = rows(&r.join("docs.parquet"));
    let cands = rows(&r.join("candidates.parquet"));
    let envs = rows(&r.join("envs.parquet"));
    let rejects = rows(&r.join("rejects.parquet"));
    let rollouts = rows(&s.join("rollouts.parquet"));
    let scores = rows(&s.join("scores.parquet"));
    let memory = rows(&r.join("memory.parquet"));
    let eval = rows(&r.join("eval.parquet"));
    let seed_memory = rows(&run.join("memory-0000.parquet"));
    assert_eq!(docs.len(), 2);
    assert_eq!(cands.len(), 4, "2 documents × 2 samples");
    let doc_ids: HashSet<String> = strs(&docs, "doc_id").into_iter().collect();
    assert!(strs(&cands, "doc_id").iter().all(|d| doc_ids.contains(d)));
    assert_eq!(envs.len() + rejects.len(), 4, "every candidate is an environment or a reject");
    assert_eq!(envs.len(), 1, "the two fixed candidates are the same code: one environment, one duplicate");
    let cand_ids: HashSet<String> = strs(&cands, "candidate_id").into_iter().collect();
    assert!(strs(&envs, "candidate_id").iter().chain(strs(&rejects, "candidate_id").iter()).all(|c| cand_ids.contains(c)));
    // The active pool: the new environment plus POOL from the memory, both arms, group of 2.
    let new_env = strs(&envs, "env_id")[0].clone();
    let played: HashSet<String> = strs(&rollouts, "env_id").into_iter().collect();
    assert!(played.contains(&new_env), "the new environment is played");
    let known: HashSet<String> = strs(&seed_memory, "env_id").into_iter().chain([new_env.clone()]).collect();
    assert!(played.iter().all(|e| known.contains(e)), "rollouts join the envs and the memory on env_id");
    assert_eq!(played.len(), 3, "1 new + POOL=2 from the memory");
    assert_eq!(rollouts.len(), played.len() * 2 * 4, "2 arms × group 4 per environment");
    assert!(rollouts.iter().all(|r| r["token_ids"].as_array().is_some_and(|t| !t.is_empty())));
    // Scores: one row per played environment and one per candidate (the designer's rewards).
    let scored_cands: HashSet<String> = strs(&scores, "candidate_id").into_iter().collect();
    assert_eq!(scored_cands, cand_ids, "every candidate gets a designer reward");
    let rewards: Vec<f64> = scores.iter().filter(|r| r["candidate_id"].is_string()).map(|r| r["designer_reward"].as_f64().unwrap()).collect();
    assert!(rewards.iter().any(|&x| x != rewards[0]), "designer rewards differ: {rewards:?}");
    assert!(strs(&memory, "env_id").contains(&new_env), "the new environment enters the memory");
    assert!(!eval.is_empty() && eval.iter().all(|e| e["suite"] == "rg:math"));

    // The step trained both roles.
    let m = metrics(&run);
    let stages: Vec<&str> = m.iter().filter_map(|l| l["stage"].as_str()).collect();
    for st in ["spade-validate", "spade-regret", "spade-sample-corpus", "spade-rollout", "spade-grpo-step", "spade-eval"] {
        assert!(stages.contains(&st), "metrics of {st} in {stages:?}");
    }
    let g = m.iter().find(|l| l["stage"] == "spade-grpo-step").unwrap();
    let step = &g["metrics"];
    assert_eq!(step["trained"], json!(true), "{g}");
    assert!(step["agent"]["samples"].as_u64().unwrap() > 0, "{g}");
    assert!(step["agent"]["adv_mean_abs"].as_f64().unwrap() > 0.0, "{g}");
    assert!(step["designer"]["samples"].as_u64().unwrap() >= 2, "{g}");
    assert!(step["designer"]["adv_mean_abs"].as_f64().unwrap() > 0.0, "{g}");
    assert!(step["designer"]["grad_norm"].as_f64().unwrap() > 0.0, "{g}");
    // The clipped surrogate's value at ratio 1 is −(mean advantage) per group, ~0 once centred:
    // the designer's share of the gradient (measured above) is what shows it trains.
    assert!(step["designer"]["loss"].as_f64().unwrap().is_finite(), "{g}");

    // Weights changed by the gradient (weight decay 0).
    let before = spade_model::load(&model, &Device::Cpu).unwrap();
    let after = spade_model::load(&s.join("checkpoint"), &Device::Cpu).unwrap();
    let (bv, av) = (before.weights().named_vars(), after.weights().named_vars());
    let changed = bv
        .iter()
        .filter(|(k, v)| {
            let a = v.as_tensor().flatten_all().unwrap().to_vec1::<f32>().unwrap();
            let b = av[*k].as_tensor().flatten_all().unwrap().to_vec1::<f32>().unwrap();
            a != b
        })
        .count();
    assert!(changed * 2 > bv.len(), "{changed} of {} tensors changed", bv.len());

    // The report and the recorded configuration.
    let report = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(report.contains("data:image/png;base64,"), "the report has plots");
    let signals = report.split("Self-play signals per round").nth(1).expect("the signals table").split("</table>").next().unwrap();
    assert!(signals.contains("<tr><td>1</td>"), "a row for round 1: {signals}");
    // The time table: round 1's stage seconds from the metrics, and the evaluation's share of them.
    let secs = |stage: Option<&str>| -> f64 {
        let secs = |l: &Value| l["seconds"].as_f64().or(l["wall_s"].as_f64());
        m.iter().filter(|l| l["round"] == json!(1) && stage.is_none_or(|st| l["stage"] == st)).filter_map(secs).sum()
    };
    assert!(secs(Some("spade-grpo-step")) > 0.0, "the trainer's time is counted");
    let times = report.split("Time per stage").nth(1).expect("the time table").split("</table>").next().unwrap();
    let row = times.split("<tr><td>1</td>").nth(1).expect("round 1's times").split("</tr>").next().unwrap();
    let cells: Vec<f64> = row.split("<td>").filter_map(|c| c.strip_suffix("</td>")).map(|c| c.parse().unwrap()).collect();
    let (total, share) = (cells[cells.len() - 2], cells[cells.len() - 1]);
    assert!((total - secs(None)).abs() < 1.0, "{row}");
    assert!(share > 0.0 && (share - secs(Some("spade-eval")) / secs(None)).abs() < 1e-3, "{row}");
    let cfg: Value = serde_json::from_str(&std::fs::read_to_string(run.join("config.json")).unwrap()).unwrap();
    assert_eq!(cfg["size"], "2,2,4");
    assert_eq!(cfg["candidates"], json!(fixed.display().to_string()));
}

/// Process ids whose command line contains every needle.
pub(crate) fn pids_with(needles: &[&str]) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else { continue };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if needles.iter().all(|n| cmd.contains(n)) {
            out.push(pid);
        }
    }
    out
}

/// Every file under `dir`, at any depth.
pub(crate) fn files_under(dir: &Path) -> Vec<PathBuf> {
    let (mut out, mut stack) = (Vec::new(), vec![dir.to_path_buf()]);
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// Every table (by path under the run) with its rows, and the checkpoints' weights.
pub(crate) fn outputs(run: &Path) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for p in files_under(run) {
        let rel = p.strip_prefix(run).unwrap().display().to_string();
        if rel.ends_with(".parquet") {
            out.insert(rel, Value::Array(rows(&p)));
        } else if rel.ends_with(".safetensors") {
            let t = spade_model::candle_core::safetensors::load(&p, &Device::Cpu).unwrap();
            let sums: BTreeMap<String, Value> =
                t.iter().map(|(k, v)| (k.clone(), json!(v.flatten_all().unwrap().to_vec1::<f32>().unwrap()))).collect();
            out.insert(rel, json!(sums));
        }
    }
    out
}

#[test]
fn killed_rounds_resume_to_the_same_outputs() {
    let d = tmp();
    let model = tiny_model(&d.path().join("tiny"), 22, 8192);
    let corpus = corpus(d.path());
    let runs = d.path().join("runs");
    let args = |run: &str| vec!["rounds".to_string(), "N=2".into(), format!("RUN={run}"), "EVAL_EVERY=2".into(), "PRUNE_OPTIMIZERS=1".into()];

    // Uninterrupted.
    run_ok(make(&runs, &model, &corpus, &args("whole")));

    // Killed in the middle of round 2's rollout (round 1 done: non-empty data on disk), then rerun.
    let mut c = make(&runs, &model, &corpus, &args("killed"));
    use std::os::unix::process::CommandExt;
    c.process_group(0);
    c.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    let mut child = c.spawn().unwrap();
    let needle = runs.join("killed/round-0002").display().to_string();
    let start = Instant::now();
    let mut killed = false;
    while start.elapsed() < Duration::from_secs(600) {
        if !pids_with(&["spade-rollout", &needle]).is_empty() {
            // SIGKILL the whole group: make, the stage and its sandbox workers.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            killed = true;
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.wait();
    assert!(killed, "round 2's rollout was never seen running");
    let killed_run = runs.join("killed");
    assert!(killed_run.join("round-0001/memory.parquet").exists(), "round 1 finished before the kill");
    assert!(!killed_run.join("round-0002/step-0/rollouts.parquet").exists(), "the killed stage left no output");
    run_ok(make(&runs, &model, &corpus, &args("killed")));

    let (a, b) = (outputs(&runs.join("whole")), outputs(&killed_run));
    assert!(a.contains_key("round-0002/eval.parquet") && a.contains_key("round-0002/step-0/checkpoint/model.safetensors"));
    // A superseded checkpoint keeps its weights and loses its optimizer state; the last keeps both.
    assert!(a.contains_key("round-0001/step-0/checkpoint/model.safetensors"));
    assert!(!a.contains_key("round-0001/step-0/checkpoint/optimizer.safetensors"), "round 1's moments pruned once round 2 trained");
    assert!(a.contains_key("round-0002/step-0/checkpoint/optimizer.safetensors"), "the last checkpoint keeps its moments");
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (k, v) in &a {
        assert!(v == &b[k], "{k} differs between the uninterrupted and the resumed run");
    }
}

/// A round on the CPU designs with the prompt the warm-up trained on and its check measured: the same
/// examples, negatives, document length and token budget in the round's and the check's calls.
#[test]
fn rounds_design_with_the_warm_ups_prompt() {
    let d = tmp();
    let plan = |target: &str| {
        let mut c = Command::new("make");
        c.current_dir(root()).args(["--no-print-directory", "-s", "-n", target, "NO_BUILD=1"]);
        clean_env(&mut c);
        c.arg(format!("RUNS={}", d.path().display())).arg("MODEL=/models/m");
        let out = c.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().replace("\\\n", " ")
    };
    let line = |text: &str, stage: &str| text.lines().find(|l| l.contains(stage)).unwrap_or_else(|| panic!("{stage} in {text}")).to_string();
    let (round, check) = (plan("round"), plan("warmstart-check"));
    let prompt = "--max-new-tokens 1536 --examples 0 --negatives 0";
    assert!(line(&round, "spade-design ").contains(prompt), "{round}");
    assert!(line(&check, "spade-design ").contains(prompt), "{check}");
    assert!(line(&round, "spade-sample-corpus ").contains("--max-words 400"), "{round}");
    let warm = plan("warmstart");
    assert!(line(&warm, "spade-sample-corpus ").contains("--max-words 400") && line(&warm, "spade-sft ").contains("--examples 0"), "{warm}");
}

/// `DEVICE=cuda` makes the README's GPU recipe the round's sizes (the paper's); a knob on the
/// command line still wins; without it the CPU sizes stay.
#[test]
fn the_gpu_sizes_are_the_defaults_with_device_cuda() {
    let d = tmp();
    let plan = |extra: &[&str]| {
        let mut c = Command::new("make");
        c.current_dir(root()).args(["--no-print-directory", "-s", "-n", "round", "NO_BUILD=1"]);
        clean_env(&mut c);
        c.arg(format!("RUNS={}", d.path().display())).arg("MODEL=/models/m").args(extra);
        let out = c.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let rollouts = |text: &str| text.lines().filter(|l| l.contains("spade-rollout ")).map(String::from).collect::<Vec<_>>();
    let gpu = plan(&["DEVICE=cuda"]);
    let steps = rollouts(&gpu);
    assert_eq!(steps.len(), 4, "STEPS=4: {steps:#?}");
    for l in &steps {
        for f in ["--pool-draw weighted --pool 16 --group 8", "--max-new-tokens 512 --max-turns 8", "--device cuda", "--repr f32"] {
            assert!(l.contains(f), "{f} missing: {l}");
        }
    }
    assert!(gpu.contains("--per-doc 4") && gpu.contains("--max-new-tokens 2048 --examples 2"), "{gpu}");
    assert!(gpu.contains("spade-sample-corpus") && gpu.contains(" --n 8 "), "8 documents: {gpu}");
    let set = plan(&["DEVICE=cuda", "POOL=3", "STEPS=1", "POOL_DRAW=recent"]);
    assert!(rollouts(&set).len() == 1 && rollouts(&set)[0].contains("--pool-draw recent --pool 3 --group 8"), "{set}");
    let cpu = plan(&[]);
    let steps = rollouts(&cpu);
    assert_eq!(steps.len(), 1, "{steps:#?}");
    assert!(
        steps[0].contains("--pool 2 --group 2") && steps[0].contains("--max-new-tokens 96 --max-turns 3") && steps[0].contains("--repr auto"),
        "{}",
        steps[0]
    );
}

/// A round whose runs folder fills up (a 1 MiB tmpfs: the GRPO step's checkpoint does not fit)
/// stops at that stage with its one-line error; once there is space again (the tmpfs grown) the
/// same `make round` finishes, with the outputs of a round that never ran short and no temporary
/// file left behind.
#[test]
#[ignore = "mounts a tmpfs (root): make test-all"]
fn a_round_that_runs_out_of_disk_resumes_once_there_is_space() {
    let d = tmp();
    let model = tiny_model(&d.path().join("tiny"), 23, 8192);
    let corpus = corpus(d.path());
    let args = || vec!["round".to_string(), "RUN=r".into()];
    let whole = d.path().join("whole");
    run_ok(make(&whole, &model, &corpus, &args()));

    let small = d.path().join("small");
    let Some(tmpfs) = mount_tmpfs(&small, "size=1m") else {
        eprintln!("cannot mount a tmpfs here (not root?): not checked");
        return;
    };
    let out = make(&small, &model, &corpus, &args()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the round fitted in 1 MiB: {err}");
    let stage_errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(stage_errors.len(), 1, "{err}");
    assert!(stage_errors[0].contains("No space left on device"), "{err}");
    tmpfs.remount("size=64m");
    run_ok(make(&small, &model, &corpus, &args()));

    let (a, b) = (outputs(&whole.join("r")), outputs(&small.join("r")));
    assert!(a.contains_key("round-0001/step-0/checkpoint/model.safetensors"), "{:?}", a.keys());
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (k, v) in &a {
        assert!(v == &b[k], "{k} differs between the round that ran short of disk and the one that did not");
    }
    let left: Vec<PathBuf> =
        files_under(&small.join("r")).into_iter().filter(|p| p.strip_prefix(&small).unwrap().to_string_lossy().contains(".tmp")).collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

#[test]
fn warmstart_and_its_check_run_through_the_makefile() {
    let d = tmp();
    let model = tiny_model(&d.path().join("tiny"), 24, 8192);
    let corpus = corpus(d.path());
    let runs = d.path().join("runs");
    let mut c = make(&runs, &model, &corpus, &[]);
    c.args([
        "warmstart",
        "warmstart-check",
        "SFT_FLAGS=--epochs 1 --per-env 1 --examples 0 --max-new-tokens 64 --held-out 0.5",
        "WARM_DESIGN_FLAGS=--max-new-tokens 16 --examples 0",
        "CHECK_DOCS=2",
        "CHECK_PER_DOC=2",
        "WARM_EVAL_SUITES=rg:math",
        "WARM_EVAL_N=1",
        "WARM_EVAL_FLAGS=--max-tokens 8",
    ]);
    let out = c.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let warm = runs.join("warmstart");
    assert!(stdout.contains("make round, make rounds and make experiment now start from it"), "{stdout}");
    let check: Value = serde_json::from_str(&std::fs::read_to_string(warm.join("check.json")).unwrap()).unwrap();
    for k in ["base", "warm"] {
        assert_eq!(check[k]["samples"], 4, "{check}");
        assert!(check[k]["share"].as_f64().unwrap() <= 1.0);
        // The evaluation suites ran on both models: 1 item per task of rg:math.
        let e = &check[k]["eval"]["rg:math"];
        assert!(e["items"].as_u64().unwrap() >= 1, "{check}");
        assert!((0.0..=1.0).contains(&e["score"].as_f64().unwrap()), "{check}");
    }
    let split: Value = serde_json::from_str(&std::fs::read_to_string(warm.join("split.json")).unwrap()).unwrap();
    let held: HashSet<String> = split["held_out_docs"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
    for r in rows(&warm.join("check-docs.parquet")) {
        assert!(held.contains(r["doc_id"].as_str().unwrap()), "checked on held-out documents only");
    }
}

fn env_sets(run: &Path, round: u32) -> (HashSet<String>, usize) {
    let r = rows(&run.join(format!("round-{round:04}/step-0/rollouts.parquet")));
    (strs(&r, "env_id").into_iter().collect(), r.len())
}

#[test]
fn an_experiment_runs_its_arms_from_one_start_at_matched_compute_and_compares_them() {
    let d = tmp();
    let model = tiny_model(&d.path().join("tiny"), 25, 8192);
    let corpus = corpus(d.path());
    let runs = d.path().join("runs");
    let mut c = make(&runs, &model, &corpus, &["THREADS=2".into()]);
    // Two arms at once (ARM_JOBS=2): the fixed pool's round r waits for the spade arm's round r.
    c.args(["experiment", "EXP=exp", "N=2", "ARMS=spade,fixed-pool,rlve", "POOL=1", "EVAL_SAMPLES=1", "ARM_JOBS=2"]);
    // The rlve arm (issue #43) on three of RLVE's environments, matched to the spade arm too.
    c.arg("RLVE_POOL=rlve:Division rlve:Multiplication rlve:Sorting");
    let out = c.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let exp = runs.join("exp");
    let log = std::fs::read_to_string(exp.join("spade/logs/round-0001.log")).unwrap();
    assert!(log.contains(&format!("round 1 starts from {} (the base model", model.display())), "{log}");
    let at_line = |m: &str| stderr.lines().position(|l| l.contains(m)).unwrap_or_else(|| panic!("{m} in {stderr}"));
    for r in [1, 2] {
        assert!(at_line(&format!("arm spade round {r} done")) < at_line(&format!("arm fixed-pool round {r} started")), "{stderr}");
        assert!(at_line(&format!("arm spade round {r} done")) < at_line(&format!("arm rlve round {r} started")), "{stderr}");
    }
    assert!(at_line("arm spade round 1 done") < at_line("arm spade round 2 started"), "{stderr}");
    let cfg: Value = serde_json::from_str(&std::fs::read_to_string(exp.join("spade/config.json")).unwrap()).unwrap();
    assert_eq!(cfg["threads"], "1", "each arm runs with THREADS/ARM_JOBS threads (2/2)");
    let (spade, fixed) = (exp.join("spade"), exp.join("fixed-pool"));
    // The fixed pool: other environments in round 2, as many environments and episodes as spade.
    let (f1, n1) = env_sets(&fixed, 1);
    let (f2, n2) = env_sets(&fixed, 2);
    assert!(f2.iter().any(|e| !f1.contains(e)), "round 2 draws environments round 1 did not play: {f1:?} {f2:?}");
    for (round, (f, n)) in [(1, (f1, n1)), (2, (f2, n2))] {
        let (s, sn) = env_sets(&spade, round);
        assert_eq!((f.len(), n), (s.len(), sn), "round {round}: the baseline plays as many environments and episodes");
    }
    let cfg: Value = serde_json::from_str(&std::fs::read_to_string(fixed.join("config.json")).unwrap()).unwrap();
    assert_eq!(cfg["fixed_pool"], "1");
    // The rlve arm: RLVE's environments only, at their windows (difficulty 0 here: the tiny model
    // never wins), as many environments and episodes as spade, the windows' table each round.
    let rlve = exp.join("rlve");
    for round in [1, 2] {
        let played = rows(&rlve.join(format!("round-{round:04}/step-0/rollouts.parquet")));
        assert!(!played.is_empty() && strs(&played, "skill").iter().all(|s| s.starts_with("rlve:")), "{:?}", strs(&played, "skill"));
        let (s, sn) = env_sets(&spade, round);
        assert_eq!((env_sets(&rlve, round).0.len(), played.len()), (s.len().min(3), sn / s.len() * s.len().min(3)));
        let table = std::fs::read_to_string(rlve.join(format!("round-{round:04}/rlve-difficulty.csv"))).unwrap();
        assert!(table.starts_with("identifier,low,high,") && table.lines().count() == 4 && table.contains("\nSorting,0,0,"), "{table}");
    }
    // The comparison: round 0 (the start) and two rounds per arm, with compute.
    let csv = std::fs::read_to_string(exp.join("compare.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    for col in [
        "arm",
        "round",
        "validity",
        "edge_share",
        "regret",
        "vendi_per_n",
        "nohint_return",
        "rg",
        "rg_se",
        "episodes",
        "agent_tokens_trained",
        "designer_tokens_trained",
        "hint_lift_positive",
        "designer_variance_share",
        "envs_played",
        "round_seconds",
        "eval_share",
    ] {
        assert!(header.contains(&col), "{col} in {header:?}");
    }
    let body: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let at = |arm: &str, round: &str, col: &str| -> String {
        let i = header.iter().position(|h| *h == col).unwrap();
        body.iter().find(|r| r[0] == arm && r[1] == round).unwrap_or_else(|| panic!("{arm} {round} in {csv}"))[i].to_string()
    };
    for arm in ["spade", "fixed-pool", "rlve"] {
        assert!(!at(arm, "0", "rg").is_empty(), "the start's evaluation: {csv}");
        assert!(at(arm, "0", "eval_share").is_empty(), "the start is no round: {csv}");
        for r in ["1", "2"] {
            assert!(at(arm, r, "episodes").parse::<u64>().unwrap() > 0, "{csv}");
            let share: f64 = at(arm, r, "eval_share").parse().unwrap();
            assert!(share > 0.0 && share < 1.0, "{arm} {r}: {csv}");
            assert!(!at(arm, r, "rg").is_empty(), "{csv}");
        }
    }
    assert_eq!(at("fixed-pool", "1", "designer_tokens_trained"), "0", "the baseline trains no designer");
    assert!(at("fixed-pool", "1", "designer_variance_share").is_empty(), "no designer groups: {csv}");
    for arm in ["spade", "fixed-pool"] {
        assert_eq!(at(arm, "1", "envs_played").parse::<usize>().unwrap(), env_sets(&exp.join(arm), 1).0.len(), "{csv}");
    }
    assert!(at("fixed-pool", "1", "validity").is_empty());
    let page = std::fs::read_to_string(exp.join("compare.html")).unwrap();
    assert!(page.matches("data:image/png;base64,").count() >= 8, "one plot per metric");
    let fig = std::fs::read(exp.join("compare.png")).unwrap();
    assert!(fig.starts_with(b"\x89PNG"), "the README figure");
    let md = std::fs::read_to_string(exp.join("compare.md")).unwrap();
    let (table, paired) = md.split_once("\n\n").unwrap_or((&md, ""));
    assert_eq!(table.lines().count(), 2 + body.len(), "a Markdown row per CSV row:\n{md}");
    assert!(md.lines().nth(2).unwrap().starts_with("| spade | 0 |"), "{md}");
    // Paired differences: each arm's rounds against the start, the spade arm's also against the fixed pool.
    let pair = |arm: &str, round: &str, measure: &str| {
        paired
            .lines()
            .find(|l| l.starts_with(&format!("| {arm} | {round} | {measure} |")))
            .unwrap_or_else(|| panic!("{arm} {round} {measure}:\n{md}"))
            .to_string()
    };
    for r in ["1", "2"] {
        let cells: Vec<String> = pair("spade", r, "rg:easy").split('|').map(|c| c.trim().to_string()).collect();
        assert!(cells[4].contains('[') && cells[5].contains('['), "against the start and the fixed pool: {cells:?}");
        let fixed: Vec<String> = pair("fixed-pool", r, "rg:easy").split('|').map(|c| c.trim().to_string()).collect();
        assert!(fixed[4].contains('[') && fixed[5].is_empty(), "the fixed pool against the start only: {fixed:?}");
    }
}

/// compare.md's paired difference to the start (issue #42): an interval over items, and, where
/// items have several samples on the same seeds, one with the items fixed, narrower when the change
/// differs between items (half gain a quarter of their episodes, half nothing) more than the seeds'
/// noise explains; none without common items.
#[test]
fn the_paired_difference_gives_an_interval_with_the_items_fixed() {
    let script = r#"
import sys
sys.path.insert(0, sys.argv[1])
import compare
start, after = [], []
for e in range(40):
    for s in range(24):
        base = 1.0 if s % 2 == 0 else 0.0
        start.append(dict(suite="envs:h", task="t", item_id=str(e), sample=s, score=base))
        after.append(dict(suite="envs:h", task="t", item_id=str(e), sample=s, score=1.0 if (base or (e < 20 and s % 4 == 1)) else 0.0))
pick = lambda s: s.startswith("envs:")
m, lo, hi, n, flo, fhi = compare.paired(after, start, pick)
assert n == 40 and abs(m - 0.125) < 1e-9, (m, n)
assert lo < flo < m < fhi < hi and (fhi - flo) < 0.6 * (hi - lo), (lo, flo, m, fhi, hi)
cell = compare.paired_markdown([dict(arm="a", round=1, measure="held-out envs", start=(m, lo, hi, n, flo, fhi))])[2]
assert "items fixed [" in cell, cell
single = [dict(r, sample=0) for r in start if r["sample"] == 0]
assert compare.paired(single, single, pick)[4:] == (None, None)
assert compare.paired(after, [dict(r, item_id="x" + r["item_id"]) for r in start], pick) is None
print(round(compare.se_items_fixed(start, pick), 4))
"#;
    let out = Command::new(python()).arg("-c").arg(script).arg(root().join("scripts")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Every item wins alternate seeds: variance 0.25 · 24/23 of each item's mean over 24 episodes.
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("{:.4}", (40.0 * 0.25 * 24.0 / 23.0 / 24.0_f64).sqrt() / 40.0));
}

/// The designer candidates a step scored, sorted.
pub(crate) fn scored(step: &Path) -> Vec<String> {
    let mut ids = strs(&rows(&step.join("scores.parquet")), "candidate_id");
    ids.sort();
    ids
}

#[test]
fn delayed_designer_batches_are_all_trained_and_live_logs_follow_the_run() {
    let d = tmp();
    let model = tiny_model(&d.path().join("tiny"), 27, 8192);
    let corpus = corpus(d.path());
    let runs = d.path().join("runs");
    let knobs = ["RUN=d".to_string(), "STEPS=2".into(), "DELAY=1".into()];
    let mut c = make(&runs, &model, &corpus, &knobs);
    c.args(["rounds", "N=2", "LOGGERS=jsonl,tensorboard"]);
    run_ok(c);
    let run = runs.join("d");
    let cands = |r: u32| {
        let mut ids = strs(&rows(&run.join(format!("round-{r:04}/candidates.parquet"))), "candidate_id");
        ids.sort();
        ids
    };
    // DELAY=1: round 1 trains no designer; round 2 is the run's last (make rounds sets FLUSH=1), so its
    // last step trains round 1's batch and its own.
    assert!(scored(&run.join("round-0001/step-1")).is_empty() && scored(&run.join("round-0002/step-0")).is_empty());
    let mut both = [cands(1), cands(2)].concat();
    both.sort();
    assert!(!cands(2).is_empty());
    assert_eq!(scored(&run.join("round-0002/step-1")), both, "the flush trains every pending batch");
    assert_eq!(std::fs::read_to_string(run.join("designer-flushed")).unwrap().trim(), "2");
    // Going on: round 3 does not train round 2's batch again.
    let mut c = make(&runs, &model, &corpus, &knobs);
    c.args(["round", "ROUND=3"]);
    run_ok(c);
    assert!(scored(&run.join("round-0003/step-1")).is_empty(), "a flushed batch is not trained twice");
    assert_eq!(std::fs::read_to_string(run.join("round-0002/step-1/designer-batch.txt")).unwrap().split_whitespace().count(), 2);

    // The live logs: TensorBoard scalars at each policy version, return and regret histograms, read
    // with tensorboard's own reader; round 3 ran without LOGGERS and was not logged.
    let script = r#"
import json, sys
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
ea = EventAccumulator(sys.argv[1], size_guidance={"scalars": 0, "histograms": 0})
ea.Reload()
t = ea.Tags()
print(json.dumps({"loss_steps": [e.step for e in ea.Scalars("spade-grpo-step/policy_version")],
                  "histograms": sorted(t["histograms"]), "scalars": len(t["scalars"])}))
"#;
    let out = std::process::Command::new(root().join(".venv/bin/python")).arg("-c").arg(script).arg(run.join("tb")).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let tb: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(tb["loss_steps"], json!([1, 2, 3, 4]), "one step per policy version: {tb}");
    for h in ["spade-rollout/return_nohint", "spade-rollout/return_hint", "spade-regret/regret"] {
        assert!(tb["histograms"].as_array().unwrap().contains(&json!(h)), "{h} in {tb}");
    }
    assert!(tb["scalars"].as_u64().unwrap() > 50, "{tb}");
    // W&B offline, added afterwards: it catches up from the first line.
    let out = std::process::Command::new(root().join(".venv/bin/python"))
        .arg(root().join("scripts/loggers.py"))
        .arg(&run)
        .args(["--loggers", "wandb"])
        .env("WANDB_MODE", "offline")
        .env("WANDB_SILENT", "true")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let offline: Vec<_> = std::fs::read_dir(run.join("wandb"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("offline-run-"))
        .collect();
    assert_eq!(offline.len(), 1);
    let state: Value = serde_json::from_str(&std::fs::read_to_string(run.join("loggers-state.json")).unwrap()).unwrap();
    assert_eq!(state["wandb"]["offset"], std::fs::metadata(run.join("metrics.jsonl")).unwrap().len());
    assert_eq!(state["wandb"]["step"], 6);
    // An unknown logger is a one-line usage error before anything runs.
    let mut c = make(&runs, &model, &corpus, &["RUN=e".into(), "LOGGERS=jsonl,mlflow".into()]);
    c.arg("round");
    let out = c.output().unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("unknown logger `mlflow`"));
    assert!(!runs.join("e").exists(), "nothing ran");
    // A flushed round recomputed ignores its own mark: it trains the same batches again.
    std::fs::remove_dir_all(run.join("round-0002/step-1")).unwrap();
    let mut c = make(&runs, &model, &corpus, &knobs);
    c.args(["round", "ROUND=2", "FLUSH=1"]);
    run_ok(c);
    assert_eq!(scored(&run.join("round-0002/step-1")), both, "recomputed with the same batches");
    let mut c = make(&runs, &model, &corpus, &knobs);
    c.args(["experiment", "ARM_JOBS=0"]);
    let out = c.output().unwrap();
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("ARM_JOBS=0"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn make_install_puts_stages_man_pages_and_completions_under_the_prefix() {
    let d = tmp();
    let prefix = d.path().join("prefix");
    let mut c = make(&d.path().join("runs"), Path::new("unused"), Path::new("unused"), &[]);
    c.arg("install").arg(format!("PREFIX={}", prefix.display()));
    run_ok(c);
    for s in STAGES {
        let bin = prefix.join("bin").join(s);
        assert!(std::process::Command::new(&bin).arg("--version").output().unwrap().status.success(), "{s} runs from the prefix");
        let man = std::fs::read_to_string(prefix.join(format!("share/man/man1/{s}.1"))).unwrap();
        assert!(man.contains(".TH"), "{s}.1 is a roff page");
        assert!(std::fs::read_to_string(prefix.join(format!("share/bash-completion/completions/{s}"))).unwrap().contains("complete -F"));
        assert!(std::fs::read_to_string(prefix.join(format!("share/zsh/site-functions/_{s}"))).unwrap().starts_with(&format!("#compdef {s}")));
        assert!(prefix.join(format!("share/fish/vendor_completions.d/{s}.fish")).exists());
    }
    assert!(prefix.join("bin/spade-sandbox-worker").exists(), "the rollout's sandbox worker beside it");
    // An installed stage finds spade's data under the prefix (share/spade), from any folder.
    let model = tiny_model(&d.path().join("tiny"), 5, 8192);
    let elsewhere = d.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let out = elsewhere.join("c.jsonl");
    let design = |bin: &Path| {
        let mut c = std::process::Command::new(bin);
        c.current_dir(&elsewhere)
            .arg("--model")
            .arg(&model)
            .args(["--no-corpus", "--groups", "1", "--per-doc", "1", "--max-new-tokens", "4", "-q", "-o"])
            .arg(&out);
        clean_env(&mut c);
        c.output().unwrap()
    };
    let o = design(&prefix.join("bin/spade-design"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(read_jsonl(&out).len(), 1);
    // The same binary outside any spade tree has no data to fall back to: a clear error, and the
    // output already written is left alone.
    let bare = d.path().join("bare/bin");
    std::fs::create_dir_all(&bare).unwrap();
    std::fs::copy(prefix.join("bin/spade-design"), bare.join("spade-design")).unwrap();
    let o = design(&bare.join("spade-design"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(read_jsonl(&out).len(), 1);
    assert!(err.contains("data/seed-envs") || err.contains("data/prompts"), "{err}");
}

#[test]
fn seed_plays_label_the_starting_memory() {
    let d = tmp();
    let model = tiny_model(&d.path().join("tiny"), 26, 8192);
    let corpus = corpus(d.path());
    let runs = d.path().join("runs");
    let seeds = root().join("tests/data/round-seeds");
    let id = |f: &str| spade_sandbox::validate::env_id(&std::fs::read_to_string(seeds.join(f)).unwrap());
    let mut plays = Vec::new();
    for (f, nohint, hint) in [("card.py", [0.0, 0.0], [0.0, 0.0]), ("coin.py", [1.0, 0.0], [1.0, 1.0])] {
        for (arm, rs) in [("nohint", nohint), ("hint", hint)] {
            for (k, r) in rs.iter().enumerate() {
                plays.push(json!({"env_id": id(f), "arm": arm, "episode": k, "return": r, "status": "ok"}));
            }
        }
    }
    let file = d.path().join("seed-plays.jsonl");
    write_jsonl(&file, &plays);
    let target = runs.join("t/memory-0000.parquet");
    let mut c = make(&runs, &model, &corpus, &["RUN=t".into(), format!("SEED_PLAYS={}", file.display())]);
    c.arg(&target);
    run_ok(c);
    let mem = rows(&target);
    let label = |f: &str| mem.iter().find(|m| m["env_id"] == json!(id(f))).unwrap_or_else(|| panic!("{f} in the memory"))["label"].clone();
    assert_eq!(label("card.py"), "too-hard", "never won without the hint");
    assert_ne!(label("coin.py"), "too-hard");
    let coin = mem.iter().find(|m| m["env_id"] == json!(id("coin.py"))).unwrap();
    assert_eq!((coin["plays_nohint"].as_i64(), coin["plays_hint"].as_i64()), (Some(2), Some(2)), "{coin}");
    assert_eq!(mem.len(), 3, "every seed is in the memory, played or not");
}

/// `SETTINGS=games,tool-use`: the round's documents are shared between the two settings (each with
/// its own skills), the starting memory adds the tool seed environments (TOOL_SEEDS), the agent
/// plays them, the knob is recorded, and the default evaluation adds BFCL multi-turn.
#[test]
fn a_round_with_both_settings_designs_and_plays_tool_environments() {
    let d = tmp();
    let model = tiny_model(&d.path().join("tiny"), 21, 8192);
    let corpus = corpus(d.path());
    let runs = d.path().join("runs");
    let c =
        make(&runs, &model, &corpus, &["round".into(), "RUN=tools".into(), "SETTINGS=games,tool-use".into(), "POOL=9".into(), "EVAL_EVERY=0".into()]);
    run_ok(c);
    let run = runs.join("tools");
    let r = run.join("round-0001");
    let cands = rows(&r.join("candidates.parquet"));
    let mut settings: Vec<String> = strs(&cands, "setting");
    settings.sort();
    assert_eq!(settings, ["games", "games", "tool-use", "tool-use"], "2 documents × 2 samples, one document per setting");
    for c in cands.iter().filter(|c| c["setting"] == "tool-use") {
        assert!(spade_design::TOOL_USE_SKILLS.contains(&c["skill"].as_str().unwrap()), "{c}");
    }
    let seed_memory = rows(&run.join("memory-0000.parquet"));
    let tools: HashSet<String> =
        seed_memory.iter().filter(|e| e["setting"] == "tool-use").map(|e| e["env_id"].as_str().unwrap().to_string()).collect();
    assert_eq!(tools.len(), 6, "the tool seed environments are in the starting memory");
    let rollouts = rows(&r.join("step-0/rollouts.parquet"));
    let played: Vec<&Value> = rollouts.iter().filter(|x| tools.contains(x["env_id"].as_str().unwrap())).collect();
    assert!(!played.is_empty() && played.iter().all(|x| x["status"] == "ok"), "the tool environments are played");
    let cfg: Value = serde_json::from_str(&std::fs::read_to_string(run.join("config.json")).unwrap()).unwrap();
    assert_eq!(cfg["settings"], "games,tool-use");
    let mut p = Command::new("make");
    p.current_dir(root()).args(["-s", "--no-print-directory", "print-EVAL_SUITES", "SETTINGS=games,tool-use"]);
    clean_env(&mut p);
    let out = String::from_utf8(p.output().unwrap().stdout).unwrap();
    assert_eq!(out.trim(), "rg:easy,envs:data/heldout-envs,bfcl-mt");
}

/// Modification times of every file under `dir`.
fn mtimes(dir: &Path) -> BTreeMap<PathBuf, std::time::SystemTime> {
    files_under(dir).into_iter().map(|p| (p.clone(), std::fs::metadata(&p).unwrap().modified().unwrap())).collect()
}

/// `make learn-check` in miniature (3 steps of the tiny model on the round's seed environments,
/// held out every 2): a curve row per policy version with the training win rate, the held-out
/// measures where taken (the same episode seeds each time), the step diagnostics and seconds by
/// stage; a summary and a figure; weights that moved; and a second run that recomputes nothing.
#[test]
fn learn_check_writes_its_curve_and_resumes() {
    let d = tmp();
    let model = tiny_model(&d.path().join("tiny"), 23, 8192);
    let corpus = corpus(d.path());
    let runs = d.path().join("runs");
    let seeds = root().join("tests/data/round-seeds");
    let args = vec![
        "learn-check".to_string(),
        "LC_STEPS=3".into(),
        "LC_EVERY=2".into(),
        "LC_GROUP=4".into(),
        "LC_HELDOUT_GROUP=3".into(),
        format!("LC_TRAIN={} {}", seeds.join("coin.py").display(), seeds.join("die.py").display()),
        format!("LC_HELDOUT={}", seeds.join("card.py").display()),
        "LC_ROLLOUT_FLAGS=--max-new-tokens 6 --max-turns 2 --progress off".into(),
        "LC_LR=1e-3".into(),
        "LC_TEMPERATURE=1.0".into(),
    ];
    run_ok(make(&runs, &model, &corpus, &args));
    let run = runs.join("learn-check");
    let text = std::fs::read_to_string(run.join("curve.csv")).unwrap();
    let curve = csv_maps(&text);
    assert_eq!(curve.iter().map(|r| r["version"]).collect::<Vec<_>>(), ["0", "1", "2", "3"], "{text}");
    for (v, r) in curve.iter().enumerate() {
        let trained = v < 3;
        assert_eq!(!r["train_win"].is_empty(), trained, "version {v}: {text}");
        assert_eq!(r["train_episodes"], if trained { "8" } else { "" }, "2 environments × 4 episodes");
        for k in
            ["tokens_trained", "entropy", "kl_to_start", "ratio_mean", "ratio_max", "clip_frac", "grad_norm", "update_norm", "rollout_s", "grpo_s"]
        {
            assert_eq!(!r[k].is_empty(), trained, "version {v} {k}: {text}");
        }
        let held = [0, 2, 3].contains(&v);
        assert_eq!(r["heldout_seeds_episodes"], if held { "6" } else { "" }, "version {v}: {text}");
        assert_eq!(r["heldout_family_episodes"], if held { "3" } else { "" }, "version {v}: {text}");
    }
    assert!(curve[0]["kl_to_start"].parse::<f64>().unwrap().abs() < 1e-6, "version 0 is the start");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["steps_done"], 3);
    assert_eq!(summary["heldout_seeds"]["pairs"], 6, "version 3 against version 0 on the same seeds: {summary}");
    assert_eq!(summary["heldout_seeds"]["to_version"], 3);
    assert!(summary["train"]["gain_points"].is_number());
    assert!(std::fs::metadata(run.join("curve.png")).unwrap().len() > 1000);
    // The held-out seeds are the same at every measure and none of them was trained on.
    let seeds_of = |p: &Path| -> HashSet<String> { rows(p).iter().map(|r| format!("{}/{}", r["env_id"], r["seed"])).collect() };
    let h0 = seeds_of(&run.join("heldout-0000/seeds.parquet"));
    assert_eq!(h0, seeds_of(&run.join("heldout-0003/seeds.parquet")));
    for s in 1..=3 {
        assert!(h0.is_disjoint(&seeds_of(&run.join(format!("step-{s:04}/rollouts.parquet")))), "step {s} trained on a held-out seed");
    }
    let w0 = spade_model::load(&model, &Device::Cpu).unwrap();
    let w3 = spade_model::load(&run.join("step-0003/checkpoint"), &Device::Cpu).unwrap();
    let name = "model.embed_tokens.weight";
    let get = |m: &spade_model::Model| m.weights().named_vars()[name].as_tensor().flatten_all().unwrap().to_vec1::<f32>().unwrap();
    assert_ne!(get(&w0), get(&w3), "three updates moved the weights");
    // Run again: nothing recomputed.
    let before = mtimes(&run);
    run_ok(make(&runs, &model, &corpus, &args));
    let after = mtimes(&run);
    let changed: Vec<_> = before.iter().filter(|(f, t)| after.get(*f) != Some(t)).map(|(f, _)| f.clone()).collect();
    assert!(changed.iter().all(|f| f.extension().is_some_and(|e| e == "csv" || e == "json" || e == "png")), "recomputed: {changed:?}");
}

/// `make learn-check LC_TRAIN_ARMS=hint,nohint`: the steps play and train both arms; the curve's
/// training win rate and the held-out measures stay the no-hint arm's.
#[test]
fn learn_check_trains_on_the_hint_arm_when_asked() {
    let d = tmp();
    let model = tiny_model(&d.path().join("tiny"), 29, 8192);
    let corpus = corpus(d.path());
    let runs = d.path().join("runs");
    let seeds = root().join("tests/data/round-seeds");
    let args = vec![
        "learn-check".to_string(),
        "LC_STEPS=1".into(),
        "LC_GROUP=4".into(),
        "LC_HELDOUT_GROUP=2".into(),
        "LC_TRAIN_ARMS=hint,nohint".into(),
        format!("LC_TRAIN={} {}", seeds.join("coin.py").display(), seeds.join("die.py").display()),
        format!("LC_HELDOUT={}", seeds.join("card.py").display()),
        "LC_ROLLOUT_FLAGS=--max-new-tokens 6 --max-turns 2 --progress off".into(),
        "LC_LR=1e-3".into(),
    ];
    run_ok(make(&runs, &model, &corpus, &args));
    let run = runs.join("learn-check");
    let arms = |p: &Path| -> BTreeMap<String, usize> {
        rows(p).iter().fold(BTreeMap::new(), |mut m, r| {
            *m.entry(r["arm"].as_str().unwrap().to_string()).or_default() += 1;
            m
        })
    };
    let both = BTreeMap::from([("hint".to_string(), 8), ("nohint".to_string(), 8)]);
    assert_eq!(arms(&run.join("step-0001/rollouts.parquet")), both);
    assert_eq!(arms(&run.join("heldout-0000/seeds.parquet")), BTreeMap::from([("nohint".to_string(), 4)]));
    // The update read both arms' plays.
    let m = std::fs::read_to_string(run.join("step-0001/metrics.jsonl")).unwrap();
    let grpo: Value = m.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).find(|v| v["stage"] == "spade-grpo-step").unwrap();
    assert_eq!(grpo["read"]["agent"]["rows"], 16, "{grpo}");
    let text = std::fs::read_to_string(run.join("curve.csv")).unwrap();
    let v0 = &csv_maps(&text)[0];
    assert_eq!((v0["train_episodes"], v0["train_hint_episodes"]), ("8", "8"), "{text}");
}

/// `make hint-lift` on the tiny model: both arms of each environment played HL_GROUP times, a
/// lift.csv row per environment whose win rates and lift are the rollouts' own means, lift.json's
/// mean over the environments ever won, and HL_PROMPTS and HL_HINTS reaching the hint arm's first
/// message.
#[test]
fn hint_lift_measures_each_environment_from_its_plays() {
    let d = tmp();
    let model = tiny_model(&d.path().join("tiny"), 37, 8192);
    let corpus = corpus(d.path());
    let runs = d.path().join("runs");
    let seeds = root().join("tests/data/round-seeds");
    let prompts = d.path().join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    for f in ["agent-system-games.j2", "agent-system-tool-use.j2"] {
        std::fs::copy(root().join("data/prompts").join(f), prompts.join(f)).unwrap();
    }
    std::fs::write(prompts.join("agent-first-observation.j2"), "{% if hint %}PRIVILEGED NOTE: {{ hint }}\n\n{% endif %}{{ observation }}").unwrap();
    let hints = d.path().join("hints.tsv");
    // (A semicolon, as in the files' own hints: the fixtures lose on any action with one, so the
    // hint sent as the action does not win and validation keeps them.)
    std::fs::write(&hints, "# file\thint\ncoin.py\tSwapped coin note; either.\ndie.py\tSwapped die note; calm.\n").unwrap();
    let args = vec![
        "hint-lift".to_string(),
        format!("HL_ENVS={} {}", seeds.join("coin.py").display(), seeds.join("die.py").display()),
        "HL_GROUP=3".into(),
        format!("HL_PROMPTS={}", prompts.display()),
        format!("HL_HINTS={}", hints.display()),
    ];
    run_ok(make(&runs, &model, &corpus, &args));
    let run = runs.join("hint-lift");
    let plays = rows(&run.join("rollouts.parquet"));
    assert_eq!(plays.len(), 2 * 2 * 3, "2 environments × 2 arms × 3 episodes");
    for p in &plays {
        let t: Value = serde_json::from_str(p["transcript"].as_str().unwrap()).unwrap();
        let first = t["messages"][1]["content"].as_str().unwrap();
        assert_eq!(first.starts_with("PRIVILEGED NOTE: "), p["arm"] == "hint", "{first}");
        // HL_HINTS replaced each file's own hint.
        if p["arm"] == "hint" {
            assert!(first.starts_with("PRIVILEGED NOTE: Swapped ") && first.contains(" note; "), "{first}");
        }
    }
    let text = std::fs::read_to_string(run.join("lift.csv")).unwrap();
    let table = csv_maps(&text);
    assert_eq!(table.len(), 2, "{text}");
    let mean = |env: &str, arm: &str| {
        let xs: Vec<f64> = plays.iter().filter(|p| p["env_id"] == env && p["arm"] == arm).map(|p| p["return"].as_f64().unwrap()).collect();
        xs.iter().sum::<f64>() / xs.len() as f64
    };
    let num = |r: &BTreeMap<&str, &str>, k: &str| r[k].parse::<f64>().unwrap_or_else(|_| panic!("{k} in {text}"));
    let mut ever = Vec::new();
    for r in &table {
        let (nh, h) = (mean(r["env_id"], "nohint"), mean(r["env_id"], "hint"));
        assert!((num(r, "nohint_win") - nh).abs() < 1e-5 && (num(r, "hint_win") - h).abs() < 1e-5, "{text}");
        assert!((num(r, "lift") - (h - nh)).abs() < 1e-5, "{text}");
        assert_eq!((num(r, "nohint_episodes"), num(r, "hint_episodes")), (3.0, 3.0));
        if r["ever_won"] == "True" {
            ever.push(h - nh);
        }
    }
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(run.join("lift.json")).unwrap()).unwrap();
    assert_eq!(summary["all"]["envs"], 2);
    assert_eq!(summary["ever_won"]["envs"], ever.len(), "{summary}");
    if !ever.is_empty() {
        let m = ever.iter().sum::<f64>() / ever.len() as f64;
        assert!((summary["ever_won"]["mean_lift"].as_f64().unwrap() - m).abs() < 1e-9, "{summary}");
    }
    // A hints file that lacks a row, or has a malformed one, is refused with its name and line.
    let swap = |tsv: &str| {
        std::fs::write(&hints, tsv).unwrap();
        let out = d.path().join("swapped");
        let o = Command::new(python())
            .arg(root().join("scripts/hint_lift.py"))
            .arg("--swap")
            .arg(&hints)
            .arg(&out)
            .arg(seeds.join("coin.py"))
            .arg(seeds.join("die.py"))
            .output()
            .unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned(), out.exists())
    };
    let (code, err, wrote) = swap("coin.py\tA note.\n");
    assert_eq!((code, wrote), (Some(2), false), "{err}");
    assert!(err.contains("hints.tsv: no hint for die.py"), "{err}");
    let (code, err, wrote) = swap("coin.py\tA note.\ndie.py A note without a tab.\n");
    assert_eq!((code, wrote), (Some(2), false), "{err}");
    assert!(err.contains("hints.tsv:2: expected `file<TAB>hint`"), "{err}");
}

/// The soak's memory check (`scripts/soak.py --recheck`): a short-lived program caught at another
/// point of its start-up (12 MiB in one round, 17 in the next) is within the allowance; a program
/// whose peak grows by a third round over round is not.
#[test]
fn the_soak_memory_check_tells_growth_from_a_small_programs_jitter() {
    let d = tmp();
    let check = |regret: [u64; 3], rollout: [u64; 3]| -> (bool, Value) {
        let out = d.path().join(format!("report-{}-{}", regret[2], rollout[2]));
        std::fs::create_dir_all(&out).unwrap();
        let mut csv = String::from("round,seconds,procs_peak,procs_end,fds_peak,workers_peak,workers_end,runs_bytes,tmp_bytes,shm_bytes,scratch_bytes,rss_peak_kib.spade-regret,rss_peak_kib.spade-rollout,workers_orphaned\n");
        for (i, (g, r)) in regret.iter().zip(rollout).enumerate() {
            csv += &format!("{},60.0,22,10,30,12,0,{},0,0,0,{g},{r},\n", i + 1, (i + 1) << 30);
        }
        csv += "end,10.0,0,0,0,0,0,0,0,0,0,,,0\n";
        std::fs::write(out.join("soak.csv"), csv).unwrap();
        let summary = json!({"baseline": {"runs_bytes": 0, "tmp_bytes": 0, "shm_bytes": 0, "scratch_bytes": 0}});
        std::fs::write(out.join("soak.json"), summary.to_string()).unwrap();
        let o = Command::new(python()).arg(root().join("scripts/soak.py")).arg("--recheck").arg(&out).output().unwrap();
        let summary: Value = serde_json::from_str(&std::fs::read_to_string(out.join("soak.json")).unwrap()).unwrap();
        (o.status.success(), summary["failed_checks"].clone())
    };
    let (ok, failed) = check([17_900, 12_664, 17_424], [1_000_000, 1_050_000, 1_060_000]);
    assert!(ok && failed == json!([]), "{failed}");
    let (ok, failed) = check([17_900, 12_664, 17_424], [1_000_000, 1_000_000, 1_340_000]);
    assert!(!ok, "{failed}");
    assert_eq!(failed, json!(["round 3: rss_peak_kib.spade-rollout 1340000 over round 2's 1000000"]));
}

/// `make soak` on the tiny model, two rounds: a row per round and one after the run, nothing of
/// the run left behind (processes, sandbox workers, /tmp, /dev/shm, scratch), the checks passed.
#[test]
#[ignore = "a soak of two rounds (~1 min): make test-all"]
fn a_short_soak_leaves_nothing_behind() {
    let d = tmp();
    let model = tiny_model(&d.path().join("tiny"), 31, 8192);
    let corpus = corpus(d.path());
    let runs = d.path().join("runs");
    let out = d.path().join("report");
    let mut c = make(&runs, &model, &corpus, &["soak".into(), "SOAK_ROUNDS=2".into(), format!("SOAK_OUT={}", out.display())]);
    // A temp folder of its own: the other tests' files in /tmp are not this run's.
    std::fs::create_dir_all(d.path().join("tmp")).unwrap();
    c.env("TMPDIR", d.path().join("tmp"));
    let o = c.output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "{stdout}\n{stderr}");
    let csv = std::fs::read_to_string(out.join("soak.csv")).unwrap();
    let rounds: Vec<&str> = csv.lines().skip(1).map(|l| l.split(',').next().unwrap()).collect();
    assert_eq!(rounds, ["1", "2", "end"], "{csv}");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(out.join("soak.json")).unwrap()).unwrap();
    assert_eq!(summary["failed_checks"], json!([]), "{summary}");
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let end: Vec<&str> = csv.lines().last().unwrap().split(',').collect();
    let col = |k: &str| end[header.iter().position(|h| *h == k).unwrap_or_else(|| panic!("{k} in {header:?}"))];
    assert_eq!((col("procs_end"), col("workers_end")), ("0", "0"), "{csv}");
    assert!(header.iter().any(|h| h.starts_with("rss_peak_kib.spade-rollout")), "{header:?}");
    assert!(std::fs::read(out.join("soak.png")).unwrap().starts_with(b"\x89PNG"));
}
