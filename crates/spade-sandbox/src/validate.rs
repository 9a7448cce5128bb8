//! The checks of `spade-validate`, as a library: one candidate in, one [`Verdict`] out, plus
//! exact / near duplicate detection over a batch.
//!
//! Stages, in order (the first that fails is recorded, with a graded validity — how far the
//! candidate got, for the designer's reward):
//!
//! | stage | validity | fails when |
//! | --- | --- | --- |
//! | `parse` | 0.0 | there is no code |
//! | `syntax` | 0.1 | the code does not compile |
//! | `load` | 0.2 | executing the module or instantiating the class fails or times out |
//! | `interface` | 0.3 | not exactly one environment class; wrong return shapes or types; empty first observation; a tool environment (`get_tools`/`execute_tool`) labelled `games` |
//! | `probe` | 0.4 | `reset`/`step` raise, time out, run out of memory, crash or print too much under the probe battery |
//! | `range` | 0.5 | a reward is not finite or outside `--reward-range` |
//! | `termination` | 0.6 | a probe episode does not end within `--max-turns` |
//! | `determinism` | 0.7 | the same seeds and actions, replayed in a separate fork, give a different transcript |
//! | `trivial` | 0.75 | a reply that says nothing (empty, or an empty answer) wins (or earns a return of 0.5 or more, whatever `info["success"]` says) on every fresh probe seed: the environment rewards any reply |
//! | `hint-leak` | 0.8 | a first observation (or its info) contains the hint: as written, or base64, hex, reversed, or with its letters spaced or re-cased; the hint wins when sent as the action (as is, and `\\boxed{}` in games), or contains a winning action found by the probes verbatim — the whole action, or its boxed answer as a whole word in any case when that answer is specific (a number of 2+ digits, or a non-generic word of 3+ letters) and wins on every probe seed (an option right on some seeds only, which a hint may name while explaining the options, is no leak) |
//! | `solver` | 0.85 | (with [`CheckConfig::require_solver`]) there is no reference solver, or it does not win every solver episode |
//! | `undetermined` | 0.87 | (games; unless [`CheckConfig::allow_undetermined`]) seeds that show the same first observation are won by different answers, and neither trying those answers in turn nor the replies to any probe tells the seeds apart: what the agent is shown does not fix the answer (see [`undetermined`]) |
//! | `duplicate` | 0.9 | same code as an earlier valid environment (exact), or token-shingle Jaccard ≥ [`NEAR_DUP_JACCARD`] (near) |
//!
//! **Reference solvers.** Beside an environment, its author may write a solver: a module of its own
//! defining `solve(observations)`, a function of the observation strings so far (the first from
//! `reset`, then one per step) that returns the next action. It runs in a sandbox child of its own,
//! a fresh one per call, with no access to the environment object or its hidden state: it sees what
//! the agent sees, without the hint. The environment is played with it on [`CheckConfig::solver_seeds`]
//! (a win as in the probes: `info["success"]`, else terminated with return ≥ 0.5); its record is in
//! [`Verdict::solver`] whenever there is a solver, and with `require_solver` an environment whose
//! solver does not win every episode (or that has none) is rejected: its answer is not determined
//! by what the agent is shown. In a seed file or a designer's code block the solver follows the
//! environment after a line [`SOLVER_MARKER`] ([`split_solver`]); a designer may also write it as
//! a separate code block.
//!
//! **Seeds.** Probe episodes cycle through [`CheckConfig::seeds`] (fixed: 0, 1, 2) and
//! [`CheckConfig::fresh_seeds`] (5) more, drawn for each candidate from [`CheckConfig::probe_salt`]
//! and its code: 63-bit seeds like the ones play uses, which an environment cannot tell from
//! play's, so one that behaves only on the fixed seeds is caught. `spade-validate` draws the salt
//! at random unless `--probe-seed` is given.
//!
//! The probe battery speaks the setting's action format: in `games`, `\boxed{…}` guesses (small
//! numbers, yes/no, letters, and numbers and words harvested from the first observation) plus
//! garbage; in `tool-use`, JSON tool calls `{"name": …, "arguments": {…}}` for every tool name
//! found in the first observation and info, plus garbage. Episode `i` starts with action `i` of
//! the battery and continues through the following ones, so every action is tried first once.

use std::collections::{BTreeSet, HashSet};
use std::hash::{Hash, Hasher};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use spade_schema::{EnvRow, RejectRow};

use crate::{CallError, Episode, Sandbox, Status};

/// Jaccard similarity of 5-token shingles at or above which two environments are near duplicates.
pub const NEAR_DUP_JACCARD: f64 = 0.9;
/// Tokens per shingle for near-duplicate detection.
pub const SHINGLE: usize = 5;

/// `env_id`: the first 16 hex digits of the SHA-256 of the code, exactly as run.
pub fn env_id(code: &str) -> String {
    let d = Sha256::digest(code.as_bytes());
    hex::encode(&d[..8])
}

pub use spade_schema::Setting;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    Parse,
    Syntax,
    Load,
    Interface,
    Probe,
    Range,
    Termination,
    Determinism,
    Trivial,
    HintLeak,
    Solver,
    Undetermined,
    Duplicate,
    Passed,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Parse => "parse",
            Stage::Syntax => "syntax",
            Stage::Load => "load",
            Stage::Interface => "interface",
            Stage::Probe => "probe",
            Stage::Range => "range",
            Stage::Termination => "termination",
            Stage::Determinism => "determinism",
            Stage::Trivial => "trivial",
            Stage::HintLeak => "hint-leak",
            Stage::Solver => "solver",
            Stage::Undetermined => "undetermined",
            Stage::Duplicate => "duplicate",
            Stage::Passed => "passed",
        }
    }
    /// Graded validity of a candidate that failed at this stage (1.0 when it passed).
    pub fn validity(self) -> f64 {
        match self {
            Stage::Parse => 0.0,
            Stage::Syntax => 0.1,
            Stage::Load => 0.2,
            Stage::Interface => 0.3,
            Stage::Probe => 0.4,
            Stage::Range => 0.5,
            Stage::Termination => 0.6,
            Stage::Determinism => 0.7,
            Stage::Trivial => 0.75,
            Stage::HintLeak => 0.8,
            Stage::Solver => 0.85,
            Stage::Undetermined => 0.87,
            Stage::Duplicate => 0.9,
            Stage::Passed => 1.0,
        }
    }
}

/// The line that separates an environment's code from its reference solver (see the module docs).
pub const SOLVER_MARKER: &str = "# --- solver ---";

/// [`split_solver`] of code that may be missing: (the environment's code, the solver's).
pub fn split_solver_opt(code: Option<&str>) -> (Option<String>, Option<String>) {
    code.map(split_solver).map_or((None, None), |(c, s)| (Some(c), s))
}

/// `code` split at its [`SOLVER_MARKER`] line: the environment's code (what is run and hashed as
/// `env_id`) and the solver's, when there is one.
pub fn split_solver(code: &str) -> (String, Option<String>) {
    let mut offset = 0;
    for line in code.split_inclusive('\n') {
        if line.trim() == SOLVER_MARKER {
            let env = code[..offset].trim_end().to_string() + "\n";
            let solver = code[offset + line.len()..].trim().to_string();
            return (env, (!solver.is_empty()).then(|| solver + "\n"));
        }
        offset += line.len();
    }
    (code.to_string(), None)
}

/// One candidate to check.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub code: Option<String>,
    pub hint: Option<String>,
    pub setting: Setting,
    /// The reference solver's module (defines `solve(observations)`), when there is one.
    pub solver: Option<String>,
}

#[derive(Clone, Debug)]
pub struct CheckConfig {
    /// Episodes must end within this many steps; passed to the constructor as `max_turns`.
    pub max_turns: u32,
    /// Fixed seeds the probe episodes cycle through (with the fresh ones).
    pub seeds: Vec<u64>,
    /// Fresh 63-bit seeds per candidate, derived from `probe_salt` and its code, added to `seeds`.
    pub fresh_seeds: usize,
    /// Salt of the fresh seeds (a stage draws it at random unless told).
    pub probe_salt: u64,
    /// Probe episodes replayed in a separate fork for the determinism check.
    pub replay_episodes: usize,
    /// Seeds of the solver episodes (one each).
    pub solver_seeds: Vec<u64>,
    /// Reject a candidate without a solver that wins every solver episode.
    pub require_solver: bool,
    /// Skip the `undetermined` check (an answer that changes with the seed while the agent's
    /// first observation does not).
    pub allow_undetermined: bool,
}

impl Default for CheckConfig {
    fn default() -> Self {
        CheckConfig {
            max_turns: 8,
            seeds: vec![0, 1, 2],
            fresh_seeds: 5,
            probe_salt: 0,
            replay_episodes: 4,
            solver_seeds: vec![0, 1, 2],
            require_solver: false,
            allow_undetermined: false,
        }
    }
}

/// How the reference solver did.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SolverStats {
    pub episodes: u32,
    pub wins: u32,
    /// Why an episode stopped short (the solver raised or returned no string, the environment
    /// failed, no end within the turn limit), the first such; `None` when every episode ended.
    pub error: Option<String>,
}

impl SolverStats {
    /// Whether the solver won every episode it played.
    pub fn won_all(&self) -> bool {
        self.episodes > 0 && self.wins == self.episodes && self.error.is_none()
    }
}

/// Play `code` with `solver` on each of `cfg.solver_seeds`: a fresh environment child per
/// episode, `solve(observations)` in a fresh child of its own per step.
pub fn play_solver(sb: &Sandbox, code: &str, solver: &str, cfg: &CheckConfig) -> SolverStats {
    let mut st = SolverStats::default();
    for &seed in &cfg.solver_seeds {
        st.episodes += 1;
        let outcome = (|| -> Result<bool, String> {
            let (mut ep, _) = sb.open_env(code, Some(cfg.max_turns)).map_err(|e| format!("load: {}", e.message))?;
            let r = ep.reset(seed).map_err(|e| format!("reset(seed={seed}): {}", e.message))?;
            let mut seen = vec![Value::String(r.observation)];
            let mut ret = 0.0;
            for t in 0..cfg.max_turns {
                let action = match sb.run_function(solver, "solve", &[Value::Array(seen.clone())], &serde_json::json!({})) {
                    Ok(Value::String(a)) => a,
                    Ok(other) => return Err(format!("solve() returned {} at turn {t} (seed {seed}), not a string", kind_of(&other))),
                    Err(e) => return Err(format!("solve() at turn {t} (seed {seed}): {}", e.message)),
                };
                let s = ep.step(&action).map_err(|e| format!("step({action:?}) (seed {seed}): {}", e.message))?;
                ret += s.reward;
                seen.push(Value::String(s.observation));
                if s.terminated || s.truncated {
                    ep.close();
                    return Ok(success(&s.info, s.terminated, ret));
                }
            }
            Err(format!("the solver's episode (seed {seed}) did not end within {} turns", cfg.max_turns))
        })();
        match outcome {
            Ok(won) => st.wins += u32::from(won),
            Err(e) => {
                st.error.get_or_insert(one_line(&e));
            }
        }
    }
    st
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "None",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a dict",
    }
}

/// Probe statistics of a candidate.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ProbeStats {
    pub episodes: u32,
    pub steps: u32,
    pub wins: u32,
    /// Most steps any probe episode took.
    pub max_episode_turns: u32,
    /// Distinct actions that won a probe episode (capped).
    pub winning_actions: Vec<String>,
}

/// The outcome for one candidate.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Verdict {
    pub stage: Stage,
    pub status: Status,
    pub error: String,
    pub validity: f64,
    pub class_name: Option<String>,
    pub probe: ProbeStats,
    /// The reference solver's record, when the candidate has a solver and passed the other checks.
    #[serde(default)]
    pub solver: Option<Box<SolverStats>>,
    /// The first `reset` (fixed seed 0) of a candidate that got that far: what the agent is shown first.
    #[serde(skip)]
    pub first: Option<Box<crate::ResetOut>>,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        self.stage == Stage::Passed
    }
    fn fail(stage: Stage, status: Status, error: impl Into<String>) -> Verdict {
        Verdict {
            stage,
            status,
            error: one_line(&error.into()),
            validity: stage.validity(),
            class_name: None,
            probe: ProbeStats::default(),
            solver: None,
            first: None,
        }
    }
    /// Turn a passed verdict into a reject at `stage` (a check made outside [`check`], such as
    /// whether the first prompt fits the agent's context).
    pub fn reject(&mut self, stage: Stage, status: Status, why: String) {
        self.stage = stage;
        self.status = status;
        self.error = one_line(&why);
        self.validity = stage.validity();
    }
    /// Turn a passed verdict into a duplicate reject.
    pub fn duplicate(&mut self, why: String) {
        self.stage = Stage::Duplicate;
        self.status = Status::Ok;
        self.error = why;
        self.validity = Stage::Duplicate.validity();
    }
}

fn one_line(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().count() > 500 {
        let cut: String = s.chars().take(500).collect();
        format!("{cut}…")
    } else {
        s
    }
}

fn stage_of(e: &CallError) -> Stage {
    match e.phase.as_deref() {
        Some("syntax") => Stage::Syntax,
        Some("load") | Some("init") => Stage::Load,
        Some("interface") => Stage::Interface,
        _ => match e.status {
            Status::InvalidResult if e.message.contains("reward") && (e.message.contains("finite") || e.message.contains("outside")) => Stage::Range,
            Status::InvalidResult => Stage::Interface,
            _ => Stage::Probe,
        },
    }
}

fn from_error(e: &CallError, what: &str) -> Verdict {
    let mut msg = format!("{what}: {}", e.message);
    if let Some(tb) = &e.traceback {
        // the last traceback line that points into the environment's code
        if let Some(line) = tb.lines().rfind(|l| l.contains("File \"<env>\"")) {
            msg.push_str(&format!(" ({})", line.trim()));
        }
    }
    Verdict::fail(stage_of(e), e.status, msg)
}

/// The probe actions for a setting, given the first observation and info.
pub fn battery(setting: Setting, observation: &str, info: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let push = |s: String, out: &mut Vec<String>| {
        if !out.contains(&s) {
            out.push(s);
        }
    };
    match setting {
        Setting::Games => {
            for a in ["0", "1", "2", "3", "5", "7", "10", "42", "-1", "yes", "no", "A", "B", "C", "true", "test"] {
                push(format!("\\boxed{{{a}}}"), &mut out);
            }
            for w in harvest(observation, 16) {
                push(format!("\\boxed{{{w}}}"), &mut out);
            }
            for g in ["", "hello", "\\boxed{}", "{\"name\": \"noop\", \"arguments\": {}}", "\\boxed{\\boxed{1}}"] {
                push(g.to_string(), &mut out);
            }
        }
        Setting::ToolUse => {
            // A tool environment declares its tools (info["tools"], JSON schemas): each is called
            // with arguments of the declared types, then with none, and the answer is tried with
            // words of the observation.
            if let Some(tools) = info.get("tools").and_then(Value::as_array) {
                let words = harvest(observation, 6);
                for t in tools.iter().take(12) {
                    let Some(name) = t.get("name").and_then(Value::as_str) else { continue };
                    if name == "answer" {
                        for w in words.iter().chain(["0", "yes", "done"].map(String::from).iter()) {
                            push(serde_json::json!({"name": "answer", "arguments": {"answer": w}}).to_string(), &mut out);
                        }
                        continue;
                    }
                    for pick in 0..2 {
                        push(serde_json::json!({"name": name, "arguments": typed_arguments(&t["parameters"], &words, pick)}).to_string(), &mut out);
                    }
                    push(serde_json::json!({"name": name, "arguments": {}}).to_string(), &mut out);
                }
            }
            let mut names: BTreeSet<String> = BTreeSet::new();
            let text = format!("{observation}\n{info}");
            tool_names(&text, &mut names);
            for n in names.iter().take(12) {
                push(serde_json::json!({"name": n, "arguments": {}}).to_string(), &mut out);
            }
            for g in [
                "{\"name\": \"no_such_tool\", \"arguments\": {}}",
                "{\"name\": 3}",
                "{}",
                "[]",
                "not json",
                "",
                "{\"name\": \"x\", \"arguments\": \"oops\"}",
                "\\boxed{1}",
                "<answer>done</answer>",
            ] {
                push(g.to_string(), &mut out);
            }
        }
    }
    out
}

/// Arguments for a tool's JSON schema: every property a value of its type (`pick` chooses among
/// the observation's words and small numbers; an enum's first or second value).
fn typed_arguments(schema: &Value, words: &[String], pick: usize) -> Value {
    let mut args = serde_json::Map::new();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else { return Value::Object(args) };
    for (k, p) in props.iter().take(8) {
        let v = if let Some(e) = p.get("enum").and_then(Value::as_array).filter(|e| !e.is_empty()) {
            e[pick % e.len()].clone()
        } else {
            match p.get("type").and_then(Value::as_str).unwrap_or("string") {
                "integer" => Value::from([1, 2][pick % 2]),
                "number" => Value::from([1.0, 2.5][pick % 2]),
                "boolean" => Value::from(pick == 0),
                "array" => Value::Array(vec![]),
                "object" => Value::Object(Default::default()),
                _ => Value::from(words.get(pick).cloned().unwrap_or_else(|| "test".into())),
            }
        };
        args.insert(k.clone(), v);
    }
    Value::Object(args)
}

/// Numbers and short words from an observation, in order of appearance.
fn harvest(text: &str, cap: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let flush = |cur: &mut String, out: &mut Vec<String>| {
        let w = cur.trim_matches(|c: char| c == '.' || c == '-').to_string();
        if !w.is_empty() && w.len() <= 12 && !out.contains(&w) {
            out.push(w);
        }
        cur.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() || c == '.' || c == '-' || c == '_' {
            cur.push(c);
        } else {
            flush(&mut cur, &mut out);
        }
        if out.len() >= cap {
            break;
        }
    }
    flush(&mut cur, &mut out);
    out.truncate(cap);
    out
}

/// Tool names: `"name": "x"` pairs and identifiers with an underscore, as tool names usually are.
fn tool_names(text: &str, out: &mut BTreeSet<String>) {
    let mut rest = text;
    while let Some(i) = rest.find("\"name\"") {
        rest = &rest[i + 6..];
        let r = rest.trim_start_matches([' ', ':']);
        if let Some(r) = r.strip_prefix('"') {
            if let Some(end) = r.find('"') {
                let n = &r[..end];
                if !n.is_empty() && n.len() <= 64 {
                    out.insert(n.to_string());
                }
            }
        }
    }
    for w in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        if w.contains('_') && w.len() <= 48 && w.chars().next().is_some_and(|c| c.is_alphabetic()) {
            out.insert(w.to_string());
        }
    }
}

fn success(info: &Value, terminated: bool, ret: f64) -> bool {
    match info.get("success").and_then(Value::as_bool) {
        Some(s) => s,
        None => terminated && ret.clamp(0.0, 1.0) >= 0.5,
    }
}

struct Played {
    transcript: Vec<String>,
    stats: ProbeStats,
    /// (seed, the first observation and its info as the agent is shown them), one per seed.
    first_observations: Vec<(u64, String)>,
}

/// Play probe episodes `0..episodes` (episode i: seed `seeds[i % n]`, actions from `i` on).
fn play(ep: &mut Episode, actions: &[String], episodes: usize, cfg: &CheckConfig) -> Result<Played, Verdict> {
    let mut transcript = Vec::new();
    let mut stats = ProbeStats::default();
    let mut first_observations = Vec::new();
    let n = actions.len();
    for i in 0..episodes {
        let seed = cfg.seeds[i % cfg.seeds.len()];
        let r = ep.reset(seed).map_err(|e| from_error(&e, &format!("reset(seed={seed})")))?;
        if r.observation.trim().is_empty() {
            return Err(Verdict::fail(Stage::Interface, Status::InvalidResult, "reset() returned an empty observation"));
        }
        transcript.push(serde_json::to_string(&r).unwrap_or_default());
        if !first_observations.iter().any(|(s, _)| *s == seed) {
            first_observations.push((seed, format!("{}\n{}", r.observation, r.info)));
        }
        stats.episodes += 1;
        let mut ret = 0.0;
        let mut ended = false;
        for t in 0..cfg.max_turns as usize {
            let a = &actions[(i + t) % n];
            let s = ep.step(a).map_err(|e| from_error(&e, &format!("step({a:?}) in probe episode {i}")))?;
            stats.steps += 1;
            ret += s.reward;
            transcript.push(serde_json::to_string(&s).unwrap_or_default());
            if s.terminated || s.truncated {
                stats.max_episode_turns = stats.max_episode_turns.max(t as u32 + 1);
                if success(&s.info, s.terminated, ret) {
                    stats.wins += 1;
                    if stats.winning_actions.len() < 32 && !stats.winning_actions.contains(a) {
                        stats.winning_actions.push(a.clone());
                    }
                }
                ended = true;
                break;
            }
        }
        if !ended {
            return Err(Verdict::fail(
                Stage::Termination,
                Status::Ok,
                format!("probe episode {i} (seed {seed}, first action {:?}) did not end within {} turns", actions[i % n], cfg.max_turns),
            ));
        }
    }
    Ok(Played { transcript, stats, first_observations })
}

fn contains_token(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut start = 0;
    while let Some(i) = hay[start..].find(needle) {
        let at = start + i;
        let before = hay[..at].chars().next_back();
        let after = hay[at + needle.len()..].chars().next();
        let edge_ok = |c: Option<char>, n: Option<char>| match (c, n) {
            (Some(c), Some(n)) => !(is_word(c) && is_word(n)),
            _ => true,
        };
        if edge_ok(before, needle.chars().next()) && edge_ok(after, needle.chars().next_back()) {
            return true;
        }
        start = at + needle.len().max(1);
        if start >= hay.len() {
            break;
        }
    }
    false
}

/// Whether a winning answer is specific enough that a hint naming it (as a whole word) gives it
/// away: numbers of two or more digits, or words of three or more letters that are not generic
/// (`true`, `yes`, `left`, …). Single digits and letters occur in hints for other reasons.
fn specific(inner: &str) -> bool {
    const GENERIC: &[&str] = &[
        "yes", "no", "true", "false", "test", "none", "done", "left", "right", "up", "down", "and", "or", "not", "the", "all", "any", "one", "two",
        "three", "zero",
    ];
    if inner.parse::<f64>().is_ok() {
        return inner.trim_start_matches(['-', '+']).chars().filter(|c| c.is_ascii_digit()).count() >= 2;
    }
    inner.chars().count() >= 3 && !GENERIC.contains(&inner.to_ascii_lowercase().as_str())
}

fn boxed_inner(a: &str) -> Option<&str> {
    let s = a.strip_prefix("\\boxed{")?.strip_suffix('}')?;
    Some(s.trim())
}

/// Whether the hint gives the answer away: it wins when sent as the action (as is, and boxed
/// in the games setting), or contains a winning probe action verbatim.
/// The probe seeds of one candidate: the fixed ones, then `fresh_seeds` drawn from the salt and
/// the code (63 bits, as play's).
fn probe_seeds(cfg: &CheckConfig, code: &str) -> Vec<u64> {
    let mut seeds = cfg.seeds.clone();
    for k in 0..cfg.fresh_seeds as u64 {
        let mut h = Sha256::new();
        h.update(b"spade-probe-seed\0");
        h.update(cfg.probe_salt.to_le_bytes());
        h.update(k.to_le_bytes());
        h.update(code.as_bytes());
        let d = h.finalize();
        seeds.push(u64::from_le_bytes(d[..8].try_into().expect("8 bytes")) & (u64::MAX >> 1));
    }
    seeds
}

/// Whether a reply that says nothing wins on every fresh probe seed (the seeds an environment
/// cannot tell from play's; the fixed ones when there are none), played to the episode's end.
/// An environment that wins half its seeds whatever the reply is rejected with chance 2^-5.
fn trivial_win(ep: &mut Episode, setting: Setting, cfg: &CheckConfig) -> Result<Option<String>, Verdict> {
    let fixed = cfg.seeds.len() - cfg.fresh_seeds.min(cfg.seeds.len());
    let seeds = if fixed < cfg.seeds.len() { &cfg.seeds[fixed..] } else { &cfg.seeds[..] };
    let empty_answer = match setting {
        Setting::Games => "\\boxed{}",
        Setting::ToolUse => "{}",
    };
    for reply in ["", empty_answer] {
        if wins_on_every_seed(ep, reply, seeds, cfg)? {
            return Ok(Some(format!("the reply {reply:?} wins on all {} fresh probe seeds: the environment rewards any reply", seeds.len())));
        }
    }
    Ok(None)
}

/// Whether `reply`, sent at every turn, wins an episode (or earns a return of 0.5 or more) on each
/// of `seeds`.
fn wins_on_every_seed(ep: &mut Episode, reply: &str, seeds: &[u64], cfg: &CheckConfig) -> Result<bool, Verdict> {
    for &seed in seeds {
        if !play_seed(ep, seed, std::iter::repeat_n(reply, cfg.max_turns as usize))?.0 {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Play `actions` in turn (at most `max_turns` of them, as the episode allows) from `reset(seed)`:
/// whether the episode was won — a win as in the probes, or a return of 0.5 or more even when
/// `info["success"]` says it was lost (play's win rates, and so regret, read the return) — and
/// the replies of the steps that did not end it.
fn play_seed<'a>(ep: &mut Episode, seed: u64, actions: impl IntoIterator<Item = &'a str>) -> Result<(bool, Vec<String>), Verdict> {
    ep.reset(seed).map_err(|e| from_error(&e, &format!("reset(seed={seed})")))?;
    let (mut ret, mut replies) = (0.0, Vec::new());
    for a in actions {
        let s = ep.step(a).map_err(|e| from_error(&e, &format!("step({a:?})")))?;
        ret += s.reward;
        if s.terminated || s.truncated {
            return Ok((success(&s.info, s.terminated, ret) || ret >= 0.5, replies));
        }
        replies.push(s.observation);
    }
    Ok((false, replies))
}

/// Candidate answers [`undetermined`] tries per group of seeds, at most.
const MAX_ANSWERS: usize = 32;

/// Whether what the agent is shown leaves the answer open: seeds whose first observations are
/// equal (the fixed and fresh probe seeds) are won by different answers, and the agent cannot
/// tell them apart. The answers tried (each as the first action after a reset, a win as in the
/// probes or a return of 0.5 or more) are the probes' winning actions and, boxed, the
/// environment's plain attributes after each reset ([`Episode::state`]: where a designer keeps
/// `self.answer`). With two or more seeds won by different answers, the environment is still
/// determined enough when playing those answers one after another wins every seed of the group
/// (elimination within its attempts), or when any reply it gives before an episode ends (to
/// those answers, or to the first action of the probe battery or a word of the observation)
/// differs between the seeds: feedback the agent can learn from, as a guessing game's "higher".
/// Otherwise no policy wins more than chance there; the message names two such seeds.
fn undetermined(ep: &mut Episode, stats: &ProbeStats, cfg: &CheckConfig) -> Result<Option<String>, Verdict> {
    let mut firsts: Vec<(u64, String, Vec<String>)> = Vec::new();
    for &seed in &cfg.seeds {
        let r = ep.reset(seed).map_err(|e| from_error(&e, &format!("reset(seed={seed})")))?;
        let state = ep.state().map_err(|e| from_error(&e, "state()"))?;
        firsts.push((seed, r.observation, state));
    }
    let play_in_turn =
        |ep: &mut Episode, seed: u64, actions: &[String]| play_seed(ep, seed, actions.iter().take(cfg.max_turns as usize).map(String::as_str));
    let mut seen: Vec<&str> = Vec::new();
    for (_, obs, _) in &firsts {
        if seen.contains(&obs.as_str()) {
            continue;
        }
        seen.push(obs);
        let group: Vec<usize> = (0..firsts.len()).filter(|&i| firsts[i].1 == *obs).collect();
        if group.len() < 2 {
            continue;
        }
        let mut answers: Vec<String> = stats.winning_actions.iter().filter(|a| boxed_inner(a).is_some()).cloned().collect();
        for &i in &group {
            for v in &firsts[i].2 {
                let a = format!("\\boxed{{{v}}}");
                if !answers.contains(&a) {
                    answers.push(a);
                }
            }
        }
        answers.truncate(MAX_ANSWERS);
        // each seed's first winning answer (one fixed order for all, so two seeds with different
        // first winners each lose to the other's)
        let mut won_by: Vec<(usize, usize)> = Vec::new();
        for &i in &group {
            for (k, a) in answers.iter().enumerate() {
                if play_in_turn(ep, firsts[i].0, std::slice::from_ref(a))?.0 {
                    won_by.push((i, k));
                    break;
                }
            }
        }
        let mut distinct: Vec<usize> = won_by.iter().map(|&(_, k)| k).collect();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() < 2 {
            continue;
        }
        let in_turn: Vec<String> = distinct.iter().map(|&k| answers[k].clone()).collect();
        let mut outcomes = Vec::new();
        for &i in &group {
            outcomes.push(play_in_turn(ep, firsts[i].0, &in_turn)?);
        }
        if outcomes.iter().all(|(won, _)| *won) {
            continue;
        }
        let differ = |seqs: &[Vec<String>]| seqs.iter().any(|x| seqs.iter().any(|y| x.iter().zip(y).any(|(a, b)| a != b)));
        let replies: Vec<Vec<String>> = outcomes.into_iter().map(|(_, r)| r).collect();
        if differ(&replies) {
            continue;
        }
        // the first action of any probe, or a word of the observation, answered differently
        let mut firsts_tried = battery(Setting::Games, obs, &Value::Null);
        firsts_tried.extend(harvest(obs, 16));
        let mut informative = false;
        for a in &firsts_tried {
            let mut seqs = Vec::new();
            for &i in &group {
                seqs.push(play_in_turn(ep, firsts[i].0, std::slice::from_ref(a))?.1);
            }
            if differ(&seqs) {
                informative = true;
                break;
            }
        }
        if informative {
            continue;
        }
        // `a`'s answer comes first in the order, so it was tried on `b`'s seed and lost there
        let a = *won_by.iter().min_by_key(|&&(_, k)| k).expect("two distinct answers");
        let b = *won_by.iter().find(|&&(_, k)| k != a.1).expect("two distinct answers");
        let shown: String = obs.chars().take(80).collect();
        return Ok(Some(format!(
            "seeds {} and {} show the same first observation ({shown:?}), but {} wins the first and loses the second, which {} wins, and no reply tells them apart: what the agent is shown does not fix the answer",
            firsts[a.0].0, firsts[b.0].0, answers[a.1], answers[b.1]
        )));
    }
    Ok(None)
}

/// Letters and digits only, lower-cased.
fn alnum_lower(s: &str) -> String {
    s.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

/// How `text` shows `hint`, if it does: as written; base64 (at any byte alignment) or hex of it;
/// reversed; or its letters and digits in order with anything between (spaced, re-cased). Hints
/// shorter than 8 letters and digits are not looked for: they match by chance.
pub fn hint_shown(hint: &str, text: &str) -> Option<&'static str> {
    use base64::Engine;
    let hint = hint.trim();
    let core = alnum_lower(hint);
    if core.chars().count() < 8 {
        return None;
    }
    if text.contains(hint) {
        return Some("as written");
    }
    let flat = alnum_lower(text);
    if flat.contains(&core) {
        return Some("spaced or re-cased");
    }
    if flat.contains(&core.chars().rev().collect::<String>()) {
        return Some("reversed");
    }
    let bytes = hint.as_bytes();
    if flat.contains(&hex::encode(bytes)) {
        return Some("hex");
    }
    // base64 of the hint after k bytes of something else: the characters that depend on the
    // hint's bytes alone (the first ones mix in the prefix; the last may be padded or mixed)
    for k in 0..3usize {
        let mut buf = vec![0u8; k];
        buf.extend_from_slice(bytes);
        for engine in [&base64::engine::general_purpose::STANDARD, &base64::engine::general_purpose::URL_SAFE] {
            let enc = engine.encode(&buf);
            let skip = (k * 8).div_ceil(6);
            let keep = enc.len().saturating_sub(4);
            if keep > skip + 8 && text.contains(&enc[skip..keep]) {
                return Some("base64");
            }
        }
    }
    None
}

fn hint_leak(ep: &mut Episode, hint: &str, setting: Setting, stats: &ProbeStats, cfg: &CheckConfig) -> Result<Option<String>, Verdict> {
    let hint_t = hint.trim();
    if hint_t.is_empty() {
        return Ok(None);
    }
    let hint_lower = hint.to_lowercase();
    for a in &stats.winning_actions {
        // An empty winning action is in every text; it says nothing about the hint.
        if !a.trim().is_empty() && hint.contains(a.as_str()) {
            return Ok(Some(format!("the hint contains the winning action {a:?}")));
        }
        // The answer inside the action: a game's boxed answer, a tool environment's `answer` call.
        // Named in the hint it gives the game away when it is the answer whatever the seed; an
        // answer right on some seeds only (one of the options a multiple-choice question lists,
        // which a hint may well name while explaining them) is not.
        if let Some(inner) = boxed_inner(a).map(str::to_string).or_else(|| answer_inner(a)).filter(|i| specific(i)) {
            if contains_token(&hint_lower, &inner.to_lowercase()) && wins_on_every_seed(ep, a, &cfg.seeds, cfg)? {
                return Ok(Some(format!("the hint contains {inner:?}, which wins as {a:?} on every probe seed")));
            }
        }
    }
    let mut tries = vec![hint_t.to_string()];
    if setting == Setting::Games && !hint_t.contains("\\boxed{") {
        tries.push(format!("\\boxed{{{hint_t}}}"));
    }
    if setting == Setting::ToolUse {
        tries.push(serde_json::json!({"name": "answer", "arguments": {"answer": hint_t}}).to_string());
    }
    for seed in cfg.seeds.iter().take(2) {
        for a in &tries {
            ep.reset(*seed).map_err(|e| from_error(&e, "reset for the hint check"))?;
            let s = ep.step(a).map_err(|e| from_error(&e, "step(hint)"))?;
            if success(&s.info, s.terminated, s.reward) {
                return Ok(Some(format!("the hint wins when sent as the action (seed {seed})")));
            }
        }
    }
    Ok(None)
}

/// The answer of a tool environment's `answer` call.
fn answer_inner(a: &str) -> Option<String> {
    let v: Value = serde_json::from_str(a).ok()?;
    (v.get("name")?.as_str()? == "answer").then(|| v["arguments"]["answer"].as_str().map(str::to_string)).flatten()
}

/// What identifies a candidate in validate's outputs besides its code.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Origin {
    pub candidate_id: Option<String>,
    pub skill: Option<String>,
    /// The file of a folder pool.
    pub source: Option<String>,
}

/// Validate's own columns of an `envs` row, after the contract's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvExtras {
    pub class_name: Option<String>,
    pub probe_episodes: i64,
    pub probe_wins: i64,
    pub probe_max_turns: i64,
    pub solver_episodes: Option<i64>,
    pub solver_wins: Option<i64>,
}

/// Validate's own columns of a `rejects` row, after the contract's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RejectExtras {
    pub source: Option<String>,
    pub class_name: Option<String>,
    pub solver: Option<String>,
    pub solver_episodes: Option<i64>,
    pub solver_wins: Option<i64>,
}

impl Verdict {
    fn solver_count(&self, f: impl Fn(&SolverStats) -> u32) -> Option<i64> {
        self.solver.as_deref().map(|s| f(s) as i64)
    }

    /// The `envs` row of a candidate that passed, and validate's columns.
    pub fn env_row(&self, c: &Candidate, o: &Origin) -> (EnvRow, EnvExtras) {
        let row = EnvRow {
            candidate_id: o.candidate_id.clone(),
            env_id: c.code.as_deref().map(env_id).unwrap_or_default(),
            code: c.code.clone().unwrap_or_default(),
            hint: c.hint.clone(),
            skill: o.skill.clone(),
            setting: Some(c.setting),
            source: o.source.clone(),
            solver: c.solver.clone(),
        };
        let extras = EnvExtras {
            class_name: self.class_name.clone(),
            probe_episodes: self.probe.episodes as i64,
            probe_wins: self.probe.wins as i64,
            probe_max_turns: self.probe.max_episode_turns as i64,
            solver_episodes: self.solver_count(|s| s.episodes),
            solver_wins: self.solver_count(|s| s.wins),
        };
        (row, extras)
    }

    /// The `rejects` row of a candidate that failed, and validate's columns.
    pub fn reject_row(&self, c: &Candidate, o: &Origin) -> (RejectRow, RejectExtras) {
        let row = RejectRow {
            candidate_id: o.candidate_id.clone(),
            env_id: c.code.as_deref().map(env_id),
            code: c.code.clone(),
            hint: c.hint.clone(),
            skill: o.skill.clone(),
            setting: Some(c.setting),
            stage: self.stage.as_str().to_string(),
            status: self.status.as_str().to_string(),
            error: self.error.clone(),
            validity: self.validity,
        };
        let extras = RejectExtras {
            source: o.source.clone(),
            class_name: self.class_name.clone(),
            solver: c.solver.clone(),
            solver_episodes: self.solver_count(|s| s.episodes),
            solver_wins: self.solver_count(|s| s.wins),
        };
        (row, extras)
    }
}

/// [`check`] every candidate, `jobs` at a time (each thread drives one sandbox worker), calling
/// `done` after each; the verdicts in the candidates' order.
pub fn check_all(sb: &Sandbox, cands: &[Candidate], cfg: &CheckConfig, jobs: usize, done: &(dyn Fn() + Sync)) -> Vec<Verdict> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    let n = cands.len();
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Verdict>>> = (0..n).map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, n.max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= n {
                    break;
                }
                let v = check(sb, &cands[i], cfg);
                tracing::debug!(row = i, stage = v.stage.as_str(), status = %v.status, "{}", v.error);
                *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(v);
                done();
            });
        }
    });
    slots.into_iter().map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()).expect("every candidate checked")).collect()
}

/// The reference solvers of a validation: how many candidates brought one, and how many valid
/// environments (passed, or rejected only as duplicates or for their solver) it won every episode of.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SolverSummary {
    pub candidates_with_solver: usize,
    pub valid: usize,
    pub valid_with_winning_solver: usize,
    pub winning_solver_share: f64,
}

impl SolverSummary {
    pub fn of(cands: &[Candidate], verdicts: &[Verdict]) -> SolverSummary {
        let checked: Vec<&Verdict> =
            verdicts.iter().filter(|v| matches!(v.stage, Stage::Passed | Stage::Duplicate | Stage::Solver | Stage::Undetermined)).collect();
        let winning = checked.iter().filter(|v| v.solver.as_ref().is_some_and(|s| s.won_all())).count();
        SolverSummary {
            candidates_with_solver: cands.iter().filter(|c| c.solver.is_some()).count(),
            valid: checked.len(),
            valid_with_winning_solver: winning,
            winning_solver_share: if checked.is_empty() { 0.0 } else { winning as f64 / checked.len() as f64 },
        }
    }
}

/// Run every check on one candidate. An infrastructure error is retried once.
pub fn check(sb: &Sandbox, c: &Candidate, cfg: &CheckConfig) -> Verdict {
    let v = check_once(sb, c, cfg);
    if v.status == Status::InfraError {
        tracing::warn!("infrastructure error, retrying once: {}", v.error);
        return check_once(sb, c, cfg);
    }
    v
}

fn check_once(sb: &Sandbox, c: &Candidate, cfg: &CheckConfig) -> Verdict {
    let code = match &c.code {
        Some(code) if !code.trim().is_empty() => code,
        _ => return Verdict::fail(Stage::Parse, Status::InvalidResult, "no code"),
    };
    let cfg = &CheckConfig { seeds: probe_seeds(cfg, code), ..cfg.clone() };
    let mut a = match sb.start() {
        Ok(ep) => ep,
        Err(e) => return Verdict::fail(Stage::Load, e.status, e.to_string()),
    };
    let info = match a.load(code, Some(cfg.max_turns)) {
        Ok(i) => i,
        Err(e) => return from_error(&e, "load"),
    };
    // first reset decides the battery
    let first = match a.reset(cfg.seeds[0]) {
        Ok(r) => r,
        Err(e) => {
            let mut v = from_error(&e, &format!("reset(seed={})", cfg.seeds[0]));
            v.class_name = Some(info.class_name);
            return v;
        }
    };
    if c.setting == Setting::Games && info.tool_env {
        let mut v = Verdict::fail(
            Stage::Interface,
            Status::InvalidResult,
            "labelled games, but the class is a tool environment (get_tools and execute_tool): label it tool-use, or drop the tools",
        );
        v.class_name = Some(info.class_name);
        return v;
    }
    let actions = battery(c.setting, &first.observation, &first.info);
    let played = match play(&mut a, &actions, actions.len(), cfg) {
        Ok(p) => p,
        Err(mut v) => {
            v.class_name = Some(info.class_name);
            return v;
        }
    };
    let mut verdict = Verdict {
        stage: Stage::Passed,
        status: Status::Ok,
        error: String::new(),
        validity: 1.0,
        class_name: Some(info.class_name.clone()),
        probe: played.stats.clone(),
        solver: None,
        first: Some(Box::new(first.clone())),
    };
    // a later check's reject keeps what the probes found
    let failed = |stage: Stage, why: String, verdict: &Verdict| {
        let mut v = Verdict::fail(stage, Status::Ok, why);
        v.class_name = verdict.class_name.clone();
        v.probe = verdict.probe.clone();
        v
    };
    // a call that failed inside a later check: at most that check's validity
    let during = |mut v: Verdict, stage: Stage, check: &str, verdict: &Verdict| {
        v.error = format!("during the {check} check: {}", v.error);
        v.validity = stage.validity().min(v.validity);
        v.class_name = verdict.class_name.clone();
        v
    };
    // determinism: replay the first episodes in a separate fork
    let k = cfg.replay_episodes.min(actions.len());
    let replay = sb.start().and_then(|mut b| {
        b.load(code, Some(cfg.max_turns))?;
        // the first reset above happened before the battery: replay it too
        b.reset(cfg.seeds[0])?;
        Ok(play(&mut b, &actions, k, cfg))
    });
    match replay {
        Ok(Ok(p)) => {
            let n = p.transcript.len();
            if played.transcript[..n.min(played.transcript.len())] != p.transcript[..] {
                let at = played.transcript.iter().zip(&p.transcript).position(|(x, y)| x != y).unwrap_or(0);
                return failed(
                    Stage::Determinism,
                    format!("same seeds and actions gave a different transcript in a separate fork (call {at})"),
                    &verdict,
                );
            }
        }
        Ok(Err(v)) => {
            let mut v2 = Verdict::fail(Stage::Determinism, v.status, format!("replay in a separate fork failed: {}", v.error));
            v2.class_name = verdict.class_name.clone();
            return v2;
        }
        Err(e) => {
            let mut v = Verdict::fail(Stage::Determinism, e.status, format!("replay in a separate fork failed: {e}"));
            v.class_name = verdict.class_name.clone();
            return v;
        }
    }
    match trivial_win(&mut a, c.setting, cfg) {
        Ok(None) => {}
        Ok(Some(why)) => return failed(Stage::Trivial, why, &verdict),
        Err(v) => return during(v, Stage::Trivial, "trivial-win", &verdict),
    }
    if let Some(hint) = &c.hint {
        if let Some((seed, how)) = played.first_observations.iter().find_map(|(seed, text)| hint_shown(hint, text).map(|how| (*seed, how))) {
            return failed(Stage::HintLeak, format!("the first observation (seed {seed}) contains the hint ({how})"), &verdict);
        }
        match hint_leak(&mut a, hint, c.setting, &verdict.probe, cfg) {
            Ok(None) => {}
            Ok(Some(why)) => return failed(Stage::HintLeak, why, &verdict),
            Err(v) => return during(v, Stage::HintLeak, "hint", &verdict),
        }
    }
    // the undetermined check plays in this episode's process; its verdict comes after the solver's
    let open_answer = (c.setting == Setting::Games && !cfg.allow_undetermined).then(|| undetermined(&mut a, &verdict.probe, cfg));
    a.close();
    if let Some(solver) = c.solver.as_deref().filter(|x| !x.trim().is_empty()) {
        verdict.solver = Some(Box::new(play_solver(sb, code, solver, cfg)));
    }
    if cfg.require_solver {
        let why = match &verdict.solver {
            None => Some(format!("no reference solver (--require-solver): write solve(observations) after a line `{SOLVER_MARKER}`")),
            Some(st) if !st.won_all() => Some(match &st.error {
                Some(e) => format!("the reference solver won {} of {} episodes: {e}", st.wins, st.episodes),
                None => format!(
                    "the reference solver won {} of {} episodes: the answer is not determined by what the agent is shown",
                    st.wins, st.episodes
                ),
            }),
            Some(_) => None,
        };
        if let Some(why) = why {
            let mut v = failed(Stage::Solver, why, &verdict);
            v.solver = verdict.solver.clone();
            return v;
        }
    }
    match open_answer {
        None | Some(Ok(None)) => {}
        Some(Ok(Some(why))) => {
            let mut v = failed(Stage::Undetermined, why, &verdict);
            v.solver = verdict.solver.clone();
            return v;
        }
        Some(Err(v)) => return during(v, Stage::Undetermined, "undetermined", &verdict),
    }
    verdict.validity = 1.0;
    verdict
}

/// The line without a trailing `#` comment (quotes tracked roughly).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' => return &line[..i],
            None => {}
        }
    }
    line
}

/// Normalised-token shingles of a code text (comments dropped, whitespace ignored).
pub fn shingles(code: &str) -> HashSet<u64> {
    let mut tokens: Vec<&str> = Vec::new();
    for line in code.lines() {
        let line = strip_comment(line);
        let mut start: Option<usize> = None;
        for (i, ch) in line.char_indices() {
            let word = ch.is_alphanumeric() || ch == '_';
            match (word, start) {
                (true, None) => start = Some(i),
                (true, Some(_)) => {}
                (false, s) => {
                    if let Some(s) = s {
                        tokens.push(&line[s..i]);
                        start = None;
                    }
                    if !ch.is_whitespace() {
                        tokens.push(&line[i..i + ch.len_utf8()]);
                    }
                }
            }
        }
        if let Some(s) = start {
            tokens.push(&line[s..]);
        }
    }
    let mut out = HashSet::new();
    if tokens.len() < SHINGLE {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        tokens.hash(&mut h);
        out.insert(h.finish());
        return out;
    }
    for w in tokens.windows(SHINGLE) {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        w.hash(&mut h);
        out.insert(h.finish());
    }
    out
}

/// Jaccard similarity of two shingle sets.
pub fn jaccard(a: &HashSet<u64>, b: &HashSet<u64>) -> f64 {
    jaccard_exact(a, b)
}

fn jaccard_exact(a: &HashSet<u64>, b: &HashSet<u64>) -> f64 {
    let inter = a.intersection(b).count();
    let union = a.len() + b.len() - inter;
    if union == 0 {
        1.0
    } else {
        inter as f64 / union as f64
    }
}

/// Mark duplicates among passed verdicts, in input order (first occurrence kept): the same
/// `env_id` (exact), or shingle Jaccard ≥ [`NEAR_DUP_JACCARD`] with a kept one (near).
/// `labels[i]` names row i in the reason (candidate id or file name). `known` environments
/// (label, code) — a memory, a training pool — count as kept before the first row, so a copy of
/// one is a duplicate too.
pub fn mark_duplicates(codes: &[Option<&str>], verdicts: &mut [Verdict], labels: &[String], known: &[(String, String)]) {
    let mut kept: Vec<(String, String, HashSet<u64>)> = known.iter().map(|(label, code)| (label.clone(), env_id(code), shingles(code))).collect();
    for i in 0..verdicts.len() {
        if !verdicts[i].passed() {
            continue;
        }
        let Some(code) = codes[i] else { continue };
        let id = env_id(code);
        if let Some((label, _, _)) = kept.iter().find(|(_, k, _)| *k == id) {
            verdicts[i].duplicate(format!("exact duplicate of {label} (env_id {id})"));
            continue;
        }
        let sh = shingles(code);
        let near = kept
            .iter()
            .map(|(label, _, s)| (label, jaccard_exact(&sh, s)))
            .filter(|(_, s)| *s >= NEAR_DUP_JACCARD)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((label, s)) = near {
            verdicts[i].duplicate(format!("near duplicate of {label} (token-shingle Jaccard {s:.3} ≥ {NEAR_DUP_JACCARD})"));
            continue;
        }
        kept.push((labels[i].clone(), id, sh));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_id_is_16_hex() {
        let id = env_id("x = 1\n");
        assert_eq!(id.len(), 16);
        assert_eq!(id, env_id("x = 1\n"));
        assert_ne!(id, env_id("x = 2\n"));
    }

    #[test]
    fn shingles_ignore_comments_and_spacing() {
        let a = shingles("def f(x):\n    return x + 1  # add\n");
        let b = shingles("# header\ndef f( x ):\n  return x+1\n");
        assert_eq!(jaccard_exact(&a, &b), 1.0);
    }

    #[test]
    fn token_match_respects_word_edges() {
        assert!(contains_token("the answer is 42.", "42"));
        assert!(!contains_token("try 142 first", "42"));
        assert!(contains_token("pick apple", "apple"));
        assert!(!contains_token("pineapples", "apple"));
    }

    #[test]
    fn battery_speaks_the_setting() {
        let g = battery(Setting::Games, "Pick 12 or 30", &Value::Null);
        assert!(g.iter().any(|a| a == "\\boxed{12}"));
        let t = battery(Setting::ToolUse, "Tools: [{\"name\": \"get_balance\"}]", &Value::Null);
        assert!(t[0].contains("get_balance"), "{t:?}");
        // A tool environment's declared tools are called with arguments of their types, and the
        // answer is tried with the observation's words.
        let info = serde_json::json!({"tools": [
            {"name": "get_rate", "parameters": {"type": "object", "properties": {"from": {"type": "string"}, "n": {"type": "integer"}, "unit": {"enum": ["kg", "lb"]}}}},
            {"name": "answer", "parameters": {"type": "object", "properties": {"answer": {"type": "string"}}}}
        ]});
        let t = battery(Setting::ToolUse, "Convert 520 GBP", &info);
        let call = |a: &str| -> Value { serde_json::from_str(a).unwrap_or(Value::Null) };
        assert_eq!(call(&t[0]), serde_json::json!({"name": "get_rate", "arguments": {"from": "Convert", "n": 1, "unit": "kg"}}));
        assert_eq!(call(&t[1]), serde_json::json!({"name": "get_rate", "arguments": {"from": "520", "n": 2, "unit": "lb"}}));
        assert!(t.iter().any(|a| call(a) == serde_json::json!({"name": "answer", "arguments": {"answer": "GBP"}})), "{t:?}");
    }

    #[test]
    fn a_solver_section_is_split_from_the_environment() {
        let (env, solver) = split_solver("class E:\n    pass\n\n# --- solver ---\ndef solve(o):\n    return 'x'\n");
        assert_eq!((env.as_str(), solver.as_deref()), ("class E:\n    pass\n", Some("def solve(o):\n    return 'x'\n")));
        assert_eq!(split_solver("class E:\n    pass\n"), ("class E:\n    pass\n".to_string(), None));
    }
}
