//! Crash consistency of a multi-round experiment: `make experiment` (3 rounds, two arms at once)
//! killed with SIGKILL at points drawn at random inside its stages (design, validation, a rollout
//! with its sandbox workers, the GRPO step's checkpoint write, eval, the compare step) and resumed
//! each time ends with the tables and checkpoints of the uninterrupted run, bit for bit; no process
//! of a killed run outlives it, no temporary file or sandbox scratch folder is left, and
//! `metrics.jsonl` has no torn or duplicated line.

use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use serde_json::Value;

use crate::round::{corpus, files_under, make, outputs, pids_with, run_ok};
use crate::util::*;

const ARMS: [&str; 2] = ["spade", "fixed-pool"];

/// Where a kill lands: once the stage is seen running, after a random delay, or at a moment of
/// its work (a sandbox worker of the rollout alive; the GRPO step's temporary checkpoint present).
#[derive(Clone, Copy, Debug)]
enum When {
    Delay,
    Workers,
    CheckpointTmp,
}

/// Every descendant of `pid` (its sandbox workers and their episodes included), from one reading
/// of every process's parent.
fn descendants(pid: i32) -> Vec<i32> {
    let mut parents = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = e.file_name().to_string_lossy().parse::<i32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
        if let Some(ppid) = stat.rsplit_once(')').and_then(|(_, r)| r.split_whitespace().nth(1)).and_then(|p| p.parse::<i32>().ok()) {
            parents.push((child, ppid));
        }
    }
    let (mut out, mut todo) = (Vec::new(), vec![pid]);
    while let Some(p) = todo.pop() {
        for &(c, _) in parents.iter().filter(|(_, pp)| *pp == p) {
            out.push(c);
            todo.push(c);
        }
    }
    out
}

fn alive(pid: i32) -> bool {
    // A zombie is gone for our purpose (its parent reaps it).
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.rsplit_once(')').is_some_and(|(_, r)| r.trim_start().starts_with('Z')))
}

/// The value after `flag` in a process's command line.
fn arg_after(pid: i32, flag: &str) -> Option<String> {
    let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let args: Vec<String> = cmd.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
    args.iter().position(|a| a == flag).and_then(|i| args.get(i + 1).cloned())
}

/// Waits until the stage `needle` of the run under `exp` runs, then kills the process group of
/// `child` at the point `when` says. Returns what was killed (None when the run ended first) and
/// the processes of the group's tree at the kill.
fn kill_in(child: &mut Child, exp: &Path, needle: &str, when: When, rng: &mut impl Rng) -> (Option<String>, Vec<i32>) {
    let exp = exp.display().to_string();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(900) {
        if child.try_wait().unwrap().is_some() {
            return (None, Vec::new());
        }
        let Some(&pid) = pids_with(&[needle, &exp]).first() else {
            std::thread::sleep(Duration::from_millis(2));
            continue;
        };
        let what = match when {
            When::Delay => {
                let ms = rng.random_range(0..400);
                std::thread::sleep(Duration::from_millis(ms));
                format!("{needle} +{ms} ms")
            }
            When::Workers => {
                let t = Instant::now();
                while alive(pid)
                    && !descendants(pid)
                        .iter()
                        .any(|c| std::fs::read_to_string(format!("/proc/{c}/comm")).is_ok_and(|c| c.starts_with("spade-sandbox")))
                {
                    if t.elapsed() > Duration::from_secs(60) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                if !alive(pid) {
                    continue;
                }
                let ms = rng.random_range(0..200);
                std::thread::sleep(Duration::from_millis(ms));
                format!("{needle} with its sandbox workers, +{ms} ms")
            }
            When::CheckpointTmp => {
                let Some(out) = arg_after(pid, "-o") else { continue };
                let out = PathBuf::from(out);
                let tmp = out.parent().unwrap().join(format!(".{}.tmp.{pid}", out.file_name().unwrap().to_string_lossy()));
                while alive(pid) && !tmp.exists() {
                    std::thread::sleep(Duration::from_micros(200));
                }
                if !alive(pid) {
                    continue;
                }
                format!("{needle} writing {}", tmp.display())
            }
        };
        let tree = descendants(child.id() as i32);
        unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
        let _ = child.wait();
        return (Some(what), tree);
    }
    panic!("{needle} of {exp} never seen running");
}

/// The lines of every arm's metrics.jsonl: each one whole JSON, none twice (a stage, round and
/// output appear once; the same line's stage and round for a stage without an output).
fn metrics_keys(exp: &Path) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    for arm in ARMS {
        let path = exp.join(arm).join("metrics.jsonl");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.ends_with('\n'), "{}: a torn last line", path.display());
        for (i, line) in text.lines().enumerate() {
            let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{}:{}: torn line ({e}): {line}", path.display(), i + 1));
            let key = format!("{arm} {} {} {} {}", v["stage"], v["round"], v["output"], v["outputs"]).replace(&exp.display().to_string(), "<exp>");
            assert!(keys.insert(key.clone()), "{}:{}: a duplicated line: {key}", path.display(), i + 1);
        }
    }
    keys
}

#[test]
#[ignore = "a 3-round, 2-arm experiment twice, the second killed 7 times (~10 min): make test-all"]
fn an_experiment_killed_anywhere_resumes_to_the_same_bytes() {
    let d = tmp();
    let model = tiny_model(&d.path().join("tiny"), 41, 8192);
    let corpus = corpus(d.path());
    let runs = d.path().join("runs");
    // The sandbox's scratch folders of these runs alone.
    let scratch = d.path().join("tmp");
    std::fs::create_dir_all(&scratch).unwrap();
    let exp = |name: &str| {
        let mut c = make(
            &runs,
            &model,
            &corpus,
            &["experiment".into(), format!("EXP={name}"), "N=3".into(), "ARMS=spade,fixed-pool".into(), "ARM_JOBS=2".into(), "EVAL_EVERY=1".into()],
        );
        c.env("TMPDIR", &scratch);
        c
    };
    run_ok(exp("whole"));

    let seed: u64 = std::env::var("SPADE_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let plan = [
        ("spade-design", When::Delay),
        ("spade-validate", When::Delay),
        ("spade-rollout", When::Workers),
        ("spade-grpo-step", When::CheckpointTmp),
        ("spade-eval", When::Delay),
        (["spade-rollout", "spade-regret", "spade-validate"][rng.random_range(0..3)], When::Delay),
        ("scripts/compare.py", When::Delay),
    ];
    let killed_exp = runs.join("killed");
    let mut kills = Vec::new();
    for (needle, when) in plan {
        let mut c = exp("killed");
        c.process_group(0).stdout(Stdio::null()).stderr(Stdio::null());
        let mut child = c.spawn().unwrap();
        let (what, tree) = kill_in(&mut child, &killed_exp, needle, when, &mut rng);
        let Some(what) = what else {
            panic!("seed {seed}: the run ended before {needle} was seen; killed so far: {kills:#?}");
        };
        // Nothing of the killed run lives on: its tree at the kill (the sandbox workers, which are
        // in sessions of their own, end with their stage) and anything naming the run.
        let t = Instant::now();
        loop {
            let left: Vec<i32> = tree.iter().copied().filter(|p| alive(*p)).chain(pids_with(&[&killed_exp.display().to_string()])).collect();
            if left.is_empty() {
                break;
            }
            assert!(t.elapsed() < Duration::from_secs(10), "seed {seed}: after the kill at {what}, processes left: {left:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
        kills.push(what);
    }
    assert!(kills.len() >= 5);
    run_ok(exp("killed"));

    // The same tables and checkpoints, bit for bit, per arm.
    let whole = runs.join("whole");
    for arm in ARMS {
        let (a, b) = (outputs(&whole.join(arm)), outputs(&killed_exp.join(arm)));
        assert!(a.contains_key("round-0003/step-0/checkpoint/model.safetensors") && a.contains_key("round-0003/eval.parquet"), "{:?}", a.keys());
        assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>(), "seed {seed}, {arm}; kills {kills:#?}");
        for (k, v) in &a {
            assert!(v == &b[k], "seed {seed}: {arm}/{k} differs between the uninterrupted and the resumed run; kills {kills:#?}");
        }
    }
    // Each file the whole run has, the resumed run has too (the compare step's included).
    let names = |dir: &Path| -> BTreeSet<PathBuf> {
        files_under(dir)
            .into_iter()
            .map(|p| p.strip_prefix(dir).unwrap().to_path_buf())
            .filter(|p| !p.starts_with("spade/logs") && !p.starts_with("fixed-pool/logs"))
            .collect()
    };
    let (a, b) = (names(&whole), names(&killed_exp));
    assert_eq!(a.difference(&b).collect::<Vec<_>>(), Vec::<&PathBuf>::new(), "seed {seed}: files missing after the resume");
    let extra: Vec<_> = b.difference(&a).collect();
    assert!(extra.is_empty(), "seed {seed}: files the uninterrupted run has not (temporary files left?): {extra:?}");
    // No temporary sibling anywhere, and no scratch folder of a killed sandbox.
    let hidden: Vec<PathBuf> = files_under(&killed_exp)
        .into_iter()
        .filter(|p| p.strip_prefix(&killed_exp).unwrap().components().any(|c| c.as_os_str().to_string_lossy().starts_with('.')))
        .collect();
    assert!(hidden.is_empty(), "seed {seed}: temporary files left: {hidden:?}");
    let left: Vec<String> = std::fs::read_dir(&scratch).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert!(left.is_empty(), "seed {seed}: left in the scratch root: {left:?}; kills {kills:#?}");
    // Metrics: no torn or duplicated line; every line the resumed run has, the whole run has too.
    let (mw, mk) = (metrics_keys(&whole), metrics_keys(&killed_exp));
    let unknown: Vec<_> = mk.difference(&mw).collect();
    assert!(unknown.is_empty(), "seed {seed}: metrics lines of the resumed run the whole run has not: {unknown:?}");
    eprintln!("seed {seed}: killed at {kills:#?}; metrics lines lost to the kills: {}", mw.difference(&mk).count());
}
