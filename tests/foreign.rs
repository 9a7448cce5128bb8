//! Foreign environments (issue #43): Reasoning-Gym tasks named `rg:<task>`, RLVE's environments
//! named `rlve:<Identifier>`, GEM's games named `gem:<Game>-v0-<level>` and TextArena's
//! single-player games named `textarena:<Game>-v0` wherever a seed environment is taken, played through the
//! adapter in the sandbox.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};
use spade_sandbox::{Sandbox, SandboxConfig, StepOut};

use crate::round::{corpus, make, rows, run_ok};
use crate::util::{python, read_jsonl, stage, tiny_model, tmp, worker};

/// The reference answer of Reasoning-Gym's item for (task, seed, config), from the venv's package.
fn reference(task: &str, seed: u64, config: &Value) -> String {
    let script = format!(
        "import json, reasoning_gym\nd = reasoning_gym.create_dataset({task:?}, seed={seed}, size=1, **json.loads({:?}))\nprint(d[0]['answer'])\n",
        config.to_string()
    );
    let out = Command::new(python()).args(["-c", &script]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The reference answer of RLVE's environment `id` at `difficulty` for `seed`, from the venv's
/// package, drawn the way the adapter documents (controller advanced `difficulty` times, one of its
/// parameter settings chosen with the seed).
fn rlve_reference(id: &str, difficulty: u32, seed: u64) -> String {
    let script = format!(
        "import random, sys, types\nt = types.ModuleType('torch'); t.manual_seed = lambda s: None\n\
t.cuda = types.SimpleNamespace(manual_seed_all=lambda s: None); sys.modules.setdefault('torch', t)\n\
from Gym.environments import identifier2environment as E\nfrom Gym.parameter_controllers import identifier2controller as C\n\
c = C[{id:?}]()\nfor _ in range({difficulty}): c.update()\ne = E[{id:?}]()\n\
assert e.generator(seed={seed}, parameter=random.Random({seed}).choice(c.get_parameter_list()))\n\
print(e.parameter['reference_answer'])\n"
    );
    let out = Command::new(python()).args(["-c", &script]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A sandbox set up to play `envs` (an envs table's rows), as the stages set one up.
fn foreign_sandbox(envs: &[Value]) -> Sandbox {
    let codes = envs.iter().map(|e| e["code"].as_str().unwrap());
    Sandbox::new(spade::foreign::sandbox_for(codes, SandboxConfig { worker: Some(worker()), ..Default::default() }).unwrap()).unwrap()
}

/// One episode of `code`: its first observation at `seed`, and the step that `reply` makes.
fn play_once(sb: &Sandbox, code: &str, seed: u64, reply: &str) -> (String, StepOut) {
    let mut ep = sb.start().unwrap();
    ep.load(code, None).unwrap();
    let obs = ep.reset(seed).unwrap().observation;
    let step = ep.step(reply).unwrap();
    ep.close();
    (obs, step)
}

fn validate(dir: &Path, inputs: &[&str]) -> (std::process::Output, Vec<Value>, Vec<Value>) {
    let (envs, rejects) = (dir.join("envs.jsonl"), dir.join("rejects.jsonl"));
    let _ = std::fs::remove_file(&envs);
    let out = stage("spade-validate")
        .args(inputs)
        .arg("-o")
        .arg(&envs)
        .arg("--rejects")
        .arg(&rejects)
        .args(["--progress", "off", "--probe-seed", "7"])
        .output()
        .unwrap();
    let read = |p: &Path| if p.exists() { read_jsonl(p) } else { Vec::new() };
    (out, read(&envs), read(&rejects))
}

/// Each adapter plays its task: a question on reset, the reference answer wins (reward 1,
/// success), a wrong one does not; the same seed asks the same question.
#[test]
fn the_rg_adapter_scores_a_right_and_a_wrong_answer() {
    let d = tmp();
    let (out, envs, rejects) = validate(d.path(), &["rg:chain_sum", "rg:gcd?min_value=2&max_value=20", "rg:letter_counting"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!((envs.len(), rejects.len()), (3, 0), "{rejects:?}");
    let sb = foreign_sandbox(&envs);
    for (env, (task, config)) in
        envs.iter().zip([("chain_sum", json!({})), ("gcd", json!({"min_value": 2, "max_value": 20})), ("letter_counting", json!({}))])
    {
        assert_eq!(env["setting"], "games");
        assert!(env["skill"].as_str().unwrap().starts_with(&format!("rg:{task}")), "{env}");
        let code = env["code"].as_str().unwrap();
        let play = |reply: &str| play_once(&sb, code, 11, reply);
        let answer = reference(task, 11, &config);
        let (obs, win) = play(&format!("I think it is \\boxed{{{answer}}}"));
        assert!(obs.contains("\\boxed{}"), "{obs}");
        assert!(win.terminated && win.reward == 1.0 && win.info["success"] == json!(true), "{task}: {answer} in {obs}: {win:?}");
        // without a box, the last number of the reply is its answer (these tasks' answers are numbers)
        let (_, plain) = play(&format!("First 0, then 1; so it is {answer}."));
        assert!(plain.reward == 1.0, "{task}: {answer}: {plain:?}");
        let (obs2, lose) = play("\\boxed{definitely not it}");
        assert_eq!(obs, obs2, "seeded");
        assert!(lose.terminated && lose.reward < 1.0 && lose.info["success"] == json!(false), "{task}: {lose:?}");
    }
}

/// RLVE's environments through their adapter: RLVE's own prompt and verifier, the reference
/// answer wins (in RLVE's <answer> tags, a final \boxed{} or read from a bare reply), a wrong one
/// does not, the same seed
/// asks the same question, a difficulty makes a different question, and a window's difficulty is
/// the one its rule gives the seed (L + seed mod (H - L + 1): 0 + 11 mod 7 = 4 here).
#[test]
fn the_rlve_adapter_scores_a_right_and_a_wrong_answer() {
    let d = tmp();
    let names = [
        "rlve:Division",
        "rlve:Sorting?difficulty=2",
        "rlve:Multiplication",
        "rlve:Multiplication?difficulty=6",
        "rlve:Multiplication?difficulty=0..6",
    ];
    let (out, envs, rejects) = validate(d.path(), &names);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!((envs.len(), rejects.len()), (5, 0), "{rejects:?}");
    let sb = foreign_sandbox(&envs);
    let mut questions = Vec::new();
    for (env, (id, difficulty)) in
        envs.iter().zip([("Division", 0), ("Sorting", 2), ("Multiplication", 0), ("Multiplication", 6), ("Multiplication", 4)])
    {
        assert_eq!(env["setting"], "games");
        assert_eq!(env["skill"], names[questions.len()]);
        let code = env["code"].as_str().unwrap();
        let play = |reply: &str| play_once(&sb, code, 11, reply);
        let answer = rlve_reference(id, difficulty, 11);
        let (obs, win) = play(&format!("So the answer is <answer>{answer}</answer>"));
        assert!(win.terminated && win.reward == 1.0 && win.info["success"] == json!(true), "{id}: {answer} in {obs}: {win:?}");
        assert_eq!(win.info["rlve_reward"], json!(1.0), "{win:?}");
        let (_, boxed) = play(&format!("Working... \\boxed{{{answer}}}"));
        assert!(boxed.reward == 1.0, "{id}: {answer}: {boxed:?}");
        let (obs2, lose) = play("<answer>definitely not it</answer>");
        assert_eq!(obs, obs2, "seeded");
        assert!(lose.terminated && lose.reward == 0.0 && lose.info["success"] == json!(false), "{id}: {lose:?}");
        // without tags, the reply is read (its last number, or its last line) and given in the tags;
        // with tags, only what they hold counts
        let (_, bare) = play(&format!("Let me see.\n{answer}"));
        assert!(bare.reward == 1.0, "{id}: {answer}: {bare:?}");
        let (_, tagged) = play(&format!("{answer}? No: <answer>-12345</answer>"));
        assert!(tagged.reward == 0.0 && tagged.info["success"] == json!(false), "{id}: {tagged:?}");
        let (_, empty) = play("");
        assert!(empty.reward == 0.0 && empty.info["rlve_reward"] == json!(-1.0), "RLVE's format score: {empty:?}");
        questions.push(obs);
    }
    assert_ne!(questions[2], questions[3], "a higher difficulty asks another question");
}

/// GEM's games pass through unchanged: GEM's own first observation for the seed, its feedback,
/// its rewards (1 for a win, -0.1 for an action it cannot read), a win by playing the game
/// (binary search in Guess The Number) is a success.
#[test]
fn the_gem_adapter_plays_gem_s_games() {
    let d = tmp();
    let (out, envs, rejects) = validate(d.path(), &["gem:GuessTheNumber-v0-easy", "gem:Mastermind-v0-easy", "gem:game:Minesweeper-v0-easy"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!((envs.len(), rejects.len()), (3, 0), "{rejects:?}");
    let skills: Vec<&str> = envs.iter().map(|e| e["skill"].as_str().unwrap()).collect();
    assert_eq!(skills, ["gem:GuessTheNumber-v0-easy", "gem:Mastermind-v0-easy", "gem:Minesweeper-v0-easy"]);
    let sb = foreign_sandbox(&envs);
    for (env, id) in envs.iter().zip(["game:GuessTheNumber-v0-easy", "game:Mastermind-v0-easy", "game:Minesweeper-v0-easy"]) {
        let script = format!("import gem\nprint(gem.make({id:?}).reset(seed=11)[0], end='')\n");
        let o = Command::new(python()).args(["-c", &script]).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut ep = sb.start().unwrap();
        ep.load(env["code"].as_str().unwrap(), Some(20)).unwrap();
        assert_eq!(ep.reset(11).unwrap().observation, String::from_utf8_lossy(&o.stdout), "{id}: GEM's own observation");
        let bad = ep.step("I will not say").unwrap();
        assert!(bad.terminated && bad.reward == -0.1 && bad.info["success"] == json!(false), "{id}: {bad:?}");
        ep.close();
    }
    // Guess The Number (1..10, 4 turns), played by binary search on GEM's feedback: a win.
    let mut ep = sb.start().unwrap();
    ep.load(envs[0]["code"].as_str().unwrap(), Some(20)).unwrap();
    ep.reset(11).unwrap();
    let (mut lo, mut hi) = (1, 10);
    let last = loop {
        let guess = (lo + hi) / 2;
        let s = ep.step(&format!("\\boxed{{{guess}}}")).unwrap();
        if s.terminated || s.truncated {
            break s;
        }
        if s.observation.contains("higher") {
            lo = guess + 1;
        } else {
            hi = guess - 1;
        }
    };
    assert!(last.reward == 1.0 && last.info["success"] == json!(true), "{last:?}");
}

/// TextArena's single-player games, unchanged: its prompt, its feedback without the echo of the
/// agent's own action, a win by playing (binary search in Guess The Number, 1..20) is reward 1 and
/// a success, a game that ends on invalid moves is not, and the same seed starts the same game.
#[test]
fn the_textarena_adapter_plays_single_player_games() {
    let d = tmp();
    let (out, envs, rejects) = validate(d.path(), &["textarena:GuessTheNumber-v0", "textarena:TowerOfHanoi-v0", "textarena:Minesweeper-v0"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!((envs.len(), rejects.len()), (3, 0), "{rejects:?}");
    assert_eq!(envs[0]["skill"], "textarena:GuessTheNumber-v0");
    let sb = foreign_sandbox(&envs);
    let code = envs[0]["code"].as_str().unwrap();
    let mut ep = sb.start().unwrap();
    ep.load(code, Some(20)).unwrap();
    let first = ep.reset(11).unwrap().observation;
    assert!(first.contains("Guess The Number") && first.contains("[5]"), "{first}");
    let (mut lo, mut hi, mut turns) = (1, 20, 0);
    let last = loop {
        let guess = (lo + hi) / 2;
        let s = ep.step(&format!("My guess is [{guess}]")).unwrap();
        turns += 1;
        if s.terminated || s.truncated {
            break s;
        }
        assert!(!s.observation.contains("My guess is"), "the agent's action is not echoed: {}", s.observation);
        if s.observation.contains("higher") {
            lo = guess + 1;
        } else {
            hi = guess - 1;
        }
    };
    assert!(last.terminated && last.reward == 1.0 && last.info["success"] == json!(true) && turns <= 5, "{last:?}");
    ep.close();
    let mut ep = sb.start().unwrap();
    ep.load(code, Some(20)).unwrap();
    assert_eq!(ep.reset(11).unwrap().observation, first, "seeded");
    let mut end = ep.step("no guess").unwrap();
    for _ in 0..5 {
        if end.terminated {
            break;
        }
        end = ep.step("still no guess").unwrap();
    }
    assert!(end.terminated && end.reward < 1.0 && end.info["success"] == json!(false), "{end:?}");
    for env in &envs[1..] {
        let mut ep = sb.start().unwrap();
        ep.load(env["code"].as_str().unwrap(), Some(20)).unwrap();
        assert!(!ep.reset(3).unwrap().observation.is_empty());
        ep.step("[0 0]").unwrap();
        ep.close();
    }
}

/// `rg:easy` stands for the six tasks of the evaluation suite at its settings; a name spade does
/// not know, a task Reasoning-Gym does not have and a collection not built yet are one line and
/// exit 2; a setting's value stays data in the generated code.
#[test]
fn names_expand_and_bad_names_are_one_line() {
    let d = tmp();
    let (out, envs, _) = validate(d.path(), &["rg:easy"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let skills: Vec<&str> = envs.iter().map(|e| e["skill"].as_str().unwrap()).collect();
    assert_eq!(skills.len(), 6, "{skills:?}");
    assert!(skills.contains(&"rg:easy/chain_sum") && skills.contains(&"rg:easy/gcd"), "{skills:?}");
    let (_, one, _) = validate(d.path(), &["rg:easy/chain_sum"]);
    let code = one[0]["code"].as_str().unwrap();
    assert!(code.contains("max_terms") && one[0]["skill"] == "rg:easy/chain_sum", "the suite's settings: {code}");
    for (input, says) in [
        ("rg:no_such_task", "Reasoning-Gym has no task `no_such_task`"),
        ("textarena:NoSuchGame-v0", "TextArena has no game `NoSuchGame-v0`"),
        ("textarena:Chess-v0", "a game for several players"),
        ("gem:NoSuchGame-v0-easy", "GEM has no game `NoSuchGame-v0-easy`"),
        ("gem:math:GSM8K", "spade plays GEM's game: environments"),
        ("rlve:NoSuchEnvironment", "RLVE has no environment `NoSuchEnvironment`"),
        ("rlve:Sorting?level=2", "is not difficulty=N"),
        ("rg:chain sum", "not a Reasoning-Gym task name"),
        ("rg:easy/lcm", "not one of rg:easy's tasks"),
    ] {
        let (out, _, _) = validate(d.path(), &[input]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{input}: {err}");
        assert!(err.contains(says) && err.trim().lines().count() == 1, "{input}: {err}");
    }
    // A hostile setting: it stays a string value; the generator refuses it, nothing runs.
    let mark = d.path().join("pwned");
    let hostile = format!("rg:chain_sum?x=\"));import os;open({:?},'w')#", mark.display().to_string());
    let (out, envs, rejects) = validate(d.path(), &[&hostile]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(envs.is_empty() && rejects.len() == 1, "{rejects:?}");
    assert!(!mark.exists(), "the setting ran as code");
    // a Python without the collections' packages: one line naming the package, exit 2
    for (input, package) in [("rlve:Division", "rlve-gym"), ("gem:GuessTheNumber-v0-easy", "gem-llm"), ("textarena:GuessTheNumber-v0", "textarena")] {
        let out = stage("spade-validate")
            .arg(input)
            .arg("-o")
            .arg(d.path().join("x.jsonl"))
            .arg("--rejects")
            .arg(d.path().join("y.jsonl"))
            .env("SPADE_PYTHON", "python3")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{input}: {err}");
        assert!(err.contains(&format!("the package {package} is not installed")) && err.trim().lines().count() == 1, "{input}: {err}");
    }
    // RLVE's aliases: the paper's 16 and all 400, each member under its own name
    let (out, envs, rejects) = validate(d.path(), &["rlve:official16?difficulty=1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let skills: Vec<&str> = envs.iter().chain(&rejects).map(|e| e["skill"].as_str().unwrap_or("?")).collect();
    assert_eq!(envs.len(), 16, "{skills:?} {rejects:?}");
    assert!(skills.contains(&"rlve:SpiralMatrix?difficulty=1"), "{skills:?}");
}

/// The foreign environments a validation kept are played by spade-rollout and spade-eval like
/// any environment (the tiny model's replies are scored by the task).
#[test]
fn rollout_and_eval_play_foreign_environments() {
    let d = tmp();
    let model = tiny_model(&d.path().join("tiny"), 9, 4096);
    let (out, envs, _) = validate(d.path(), &["rg:chain_sum", "rg:count_bits"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(envs.len(), 2);
    let r = d.path().join("r.jsonl");
    let a = stage("spade-rollout")
        .arg("--model")
        .arg(&model)
        .arg("--envs")
        .arg(d.path().join("envs.jsonl"))
        .arg("-o")
        .arg(&r)
        .args(["--group", "2", "--max-new-tokens", "6", "--max-turns", "2", "--progress", "off"])
        .output()
        .unwrap();
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let eps = read_jsonl(&r);
    assert_eq!(eps.len(), 8, "2 environments x 2 arms x 2");
    assert!(eps.iter().all(|e| e["status"] == "ok" && e["turns"] == 1), "{eps:?}");
    let e = d.path().join("e.jsonl");
    let a = stage("spade-eval")
        .arg("--model")
        .arg(&model)
        .args(["--suite", "envs:rg:chain_sum,envs:rg:gcd", "--env-samples", "2", "--max-tokens", "4", "--progress", "off", "-o"])
        .arg(&e)
        .output()
        .unwrap();
    assert!(a.status.success(), "{}", String::from_utf8_lossy(&a.stderr));
    let rows = read_jsonl(&e);
    assert_eq!(rows.len(), 4, "{rows:?}");
    assert!(rows.iter().all(|r| r["status"] == "ok" && r["task"].as_str().unwrap().starts_with("rg:")), "{rows:?}");
}

/// `make round SEEDS=…` with foreign environments: the starting memory holds them and the agent
/// plays them.
#[test]
fn a_round_starts_from_foreign_seeds() {
    let d = tmp();
    let model = tiny_model(&d.path().join("tiny"), 23, 8192);
    let corpus = corpus(d.path());
    let runs = d.path().join("runs");
    run_ok(make(
        &runs,
        &model,
        &corpus,
        &[
            "round".into(),
            "RUN=rg".into(),
            "SEEDS=rg:chain_sum rlve:Division gem:GuessTheNumber-v0-easy textarena:GuessTheNumber-v0 rg:count_bits".into(),
            "POOL=8".into(),
            "EVAL_EVERY=0".into(),
        ],
    ));
    let mem = rows(&runs.join("rg/memory-0000.parquet"));
    let skills: Vec<&str> = mem.iter().map(|m| m["skill"].as_str().unwrap()).collect();
    assert_eq!(skills, ["rg:chain_sum", "rlve:Division", "gem:GuessTheNumber-v0-easy", "textarena:GuessTheNumber-v0", "rg:count_bits"]);
    let played = rows(&runs.join("rg/round-0001/step-0/rollouts.parquet"));
    let played: Vec<(&str, &str)> = played.iter().map(|e| (e["skill"].as_str().unwrap_or("-"), e["status"].as_str().unwrap())).collect();
    for coll in ["rg:", "rlve:", "gem:", "textarena:"] {
        let foreign: Vec<&(&str, &str)> = played.iter().filter(|(s, _)| s.starts_with(coll)).collect();
        assert!(!foreign.is_empty() && foreign.iter().all(|(_, st)| *st == "ok"), "the agent played the {coll} seeds: {played:?}");
    }
}

/// The rlve arm's difficulty (scripts/rlve_difficulty.py) follows RLVE's sliding window over the
/// run's earlier no-hint episodes: the top moves up once `tau_acc` of `tau_num` episodes at the
/// top were won, the count starts again after every check, the bottom follows at `window`, the
/// hint arm and episodes below the top do not count, and later rounds are not read.
#[test]
fn rlve_difficulty_moves_the_window_by_rlve_s_rule() {
    let d = tmp();
    let run = d.path().join("run");
    // (round, skill, seed, won, arm); a window 0..1 draws difficulty seed mod 2.
    let mut eps: Vec<(u32, &str, u64, bool, &str)> = Vec::new();
    for i in 0..4 {
        eps.push((1, "rlve:Division", i, true, "nohint"));
        eps.push((1, "rlve:Sorting", i, i != 0, "nohint")); // 3 of 4: below 0.9
        eps.push((1, "rlve:Sorting", 10 + i, true, "hint")); // the hint arm is not counted
    }
    for i in 0..8 {
        // seeds 0..8 at 0..1: four at 1 (all won) move the top to 2, four at 0 do not count
        eps.push((2, "rlve:Division?difficulty=0..1", i, true, "nohint"));
    }
    for i in 0..4 {
        eps.push((3, "rlve:Division?difficulty=1..2", i, true, "nohint")); // round 3 is not read for round 3
    }
    let rows: Vec<Value> = eps
        .iter()
        .enumerate()
        .map(|(k, (r, skill, seed, won, arm))| json!({"round": r, "step": 0, "episode": k, "arm": arm, "skill": skill, "seed": seed, "success": won, "env_id": skill}))
        .collect();
    let write = format!(
        "import json, os, pyarrow as pa, pyarrow.parquet as pq\nrows = json.loads({:?})\nrun = {:?}\n\
for r in sorted({{x['round'] for x in rows}}):\n    d = os.path.join(run, 'round-%04d' % r, 'step-0'); os.makedirs(d)\n    \
pq.write_table(pa.Table.from_pylist([x for x in rows if x['round'] == r]), os.path.join(d, 'rollouts.parquet'))\n\
pq.write_table(pa.Table.from_pylist([{{'skill': s}} for s in ['rlve:Division', 'rlve:Sorting', 'rg:chain_sum']]), os.path.join(run, 'memory-0000.parquet'))\n",
        serde_json::to_string(&rows).unwrap(),
        run.display().to_string()
    );
    let out = Command::new(python()).args(["-c", &write]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/rlve_difficulty.py");
    let windows = |round: u32, extra: &[&str]| -> (String, String) {
        let (names, table) = (d.path().join("names.txt"), d.path().join("table.csv"));
        let out = Command::new(python())
            .arg(&script)
            .args(["--run", run.to_str().unwrap(), "--round", &round.to_string(), "--pool", run.join("memory-0000.parquet").to_str().unwrap()])
            .args(["--tau-num", "4", "--tau-acc", "0.9", "--window", "2", "-o", names.to_str().unwrap(), "--table", table.to_str().unwrap()])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        (std::fs::read_to_string(names).unwrap(), std::fs::read_to_string(table).unwrap())
    };
    let (names, table) = windows(1, &[]);
    assert_eq!(names, "rlve:Division\nrlve:Sorting\n", "round 1 reads nothing: {table}");
    let (names, table) = windows(2, &[]);
    assert_eq!(names, "rlve:Division?difficulty=0..1\nrlve:Sorting\n", "{table}");
    assert!(table.contains("Sorting,0,0,0,0,4,3"), "Sorting's count started again after its check: {table}");
    let (names, table) = windows(3, &[]);
    assert_eq!(names, "rlve:Division?difficulty=1..2\nrlve:Sorting\n", "the bottom follows at width 2: {table}");
    assert!(table.contains("Division,1,2,0,0,12,12"), "{table}");
    let (one, _) = windows(3, &["--n", "1", "--seed", "5"]);
    assert_eq!(one.lines().count(), 1);
    assert!(names.contains(&one), "one of the two: {one}");
}

/// A hostile environment in a sandbox that plays foreign environments: the packages it shares
/// with them (the venv's site-packages on the workers' path, preloaded in the fork server) are
/// read-only to it, and what it changes in a preloaded module stays in its own episode.
#[test]
fn a_hostile_environment_cannot_tamper_with_the_foreign_packages() {
    let d = tmp();
    let (out, envs, _) = validate(d.path(), &["gem:GuessTheNumber-v0-easy"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let sb = foreign_sandbox(&envs);
    let hostile = r#"
import os

class Env:
    def reset(self, seed=None):
        import gem
        said = []
        for target in (os.path.join(os.path.dirname(gem.__file__), "pwned.py"), gem.__file__):
            try:
                with open(target, "a") as f:
                    f.write("\nraise SystemExit('pwned')\n")
                said.append("wrote " + target)
            except OSError as e:
                said.append("refused " + type(e).__name__)
        gem.make = lambda *a, **k: None
        return " | ".join(said), {}

    def step(self, action):
        return "over", 0.0, True, False, {}
"#;
    let mut ep = sb.start().unwrap();
    ep.load(hostile, Some(2)).unwrap();
    let said = ep.reset(1).unwrap().observation;
    ep.close();
    assert!(!said.contains("wrote"), "{said}");
    assert_eq!(said.matches("refused").count(), 2, "{said}");
    // the next episode (same fork server) plays GEM's game unchanged
    let mut ep = sb.start().unwrap();
    ep.load(envs[0]["code"].as_str().unwrap(), Some(4)).unwrap();
    let first = ep.reset(5).unwrap().observation;
    assert!(first.contains("Guess The Number"), "{first}");
    ep.close();
    let gem_dir = Command::new(python()).args(["-c", "import gem, os; print(os.path.dirname(gem.__file__))"]).output().unwrap();
    let gem_dir = String::from_utf8_lossy(&gem_dir.stdout).trim().to_string();
    assert!(!Path::new(&gem_dir).join("pwned.py").exists());
}
