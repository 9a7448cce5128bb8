//! Environments other projects wrote, played unchanged through an adapter (issue #43).
//!
//! A foreign environment is named `<collection>:<name>` wherever a stage takes a `.py` seed
//! environment (`spade-validate`'s inputs, so the Makefile's `SEEDS=`, and `spade-eval --suite
//! envs:…`). The name becomes adapter code: a small spade environment class that imports the
//! collection's package *inside the sandbox* and presents one of its environments through
//! `reset(seed)` / `step(action)` with `info["success"]`. The code is stored in the tables like any
//! environment's, so every later stage plays it unchanged; its first line names it
//! ([`MARKER`]), and a sandbox playing such code gets the project venv's site-packages on its
//! Python path (read-only, as every path a worker's Python reads).
//!
//! Collections: `rg:<task>` (Reasoning-Gym; the generator's default settings, or
//! `rg:<task>?key=value&…` with JSON values, e.g. `rg:chain_sum?min_terms=2&max_terms=2`) and
//! `rg:easy` (the six tasks of the `rg:easy` evaluation suite at its settings, each named
//! `rg:easy/<task>`, which also names one of them alone). `rlve:`, `gem:` and
//! `textarena:` are not built yet and say so.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context};
use spade_sandbox::SandboxConfig;

/// First-line marker of adapter code: `# Reasoning-Gym's task … (spade's rg adapter, foreign: rg:…).`
pub const MARKER: &str = "(spade's rg adapter, foreign: ";

const RG_ADAPTER: &str = include_str!("adapters/rg.py");

/// Collections with a prefix spade knows, built or not.
const COLLECTIONS: &[(&str, Option<&str>)] = &[("rg", Some("reasoning-gym")), ("rlve", None), ("gem", None), ("textarena", None)];

/// One foreign environment, as a seed environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Foreign {
    /// The name it was given (`rg:chain_sum?…`), also its skill.
    pub name: String,
    pub code: String,
}

/// Whether `input` names a foreign environment (a known collection's prefix and not an existing
/// path).
pub fn is_foreign(input: &str) -> bool {
    input.split_once(':').is_some_and(|(c, _)| COLLECTIONS.iter().any(|(k, _)| *k == c)) && !Path::new(input).exists()
}

/// Whether environment code is adapter code (its first line carries [`MARKER`]).
pub fn is_adapter(code: &str) -> bool {
    code.lines().next().is_some_and(|l| l.starts_with('#') && l.contains(MARKER))
}

/// A Python string literal of `s` (JSON's escapes are Python's).
fn py_str(s: &str) -> String {
    serde_json::to_string(s).expect("a string serialises")
}

/// `rg:<task>[?k=v&…]` → (task, config object); values are JSON, else strings.
fn parse_rg(rest: &str, input: &str) -> anyhow::Result<(String, serde_json::Map<String, serde_json::Value>)> {
    let (task, query) = rest.split_once('?').unwrap_or((rest, ""));
    if task.is_empty() || !task.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        bail!("{input}: `{task}` is not a Reasoning-Gym task name (letters, digits and _)");
    }
    let mut config = serde_json::Map::new();
    for kv in query.split('&').filter(|s| !s.is_empty()) {
        let Some((k, v)) = kv.split_once('=') else { bail!("{input}: `{kv}` is not key=value") };
        let v = serde_json::from_str(v).unwrap_or_else(|_| serde_json::Value::String(v.to_string()));
        config.insert(k.to_string(), v);
    }
    Ok((task.to_string(), config))
}

fn rg_code(name: &str, task: &str, config: &serde_json::Map<String, serde_json::Value>) -> String {
    let config = serde_json::Value::Object(config.clone()).to_string();
    RG_ADAPTER
        .replace("__TASK_JSON__", &py_str(&py_str(task)))
        .replace("__CONFIG_JSON__", &py_str(&config))
        .replace("__TASK__", task)
        .replace("__NAME__", name)
}

/// The environments `inputs` name (each a foreign name; an alias such as `rg:easy` names
/// several), one list per input, their names checked against the installed packages by `python`
/// (the project's venv): an unknown collection, a collection not built yet, a missing package or
/// an unknown task is an error naming it.
pub fn expand(inputs: &[String], python: &Path) -> anyhow::Result<Vec<Vec<Foreign>>> {
    let mut wanted: Vec<(usize, String, String, serde_json::Map<String, serde_json::Value>)> = Vec::new();
    for (at, input) in inputs.iter().enumerate() {
        let (coll, rest) = input.split_once(':').with_context(|| format!("{input}: not <collection>:<name>"))?;
        match COLLECTIONS.iter().find(|(k, _)| *k == coll) {
            None => bail!("{input}: unknown environment collection `{coll}` (known: rg)"),
            Some((_, None)) => bail!("{input}: the `{coll}` adapter is not built yet (issue #43); spade plays `rg:` environments"),
            Some(_) => {}
        }
        if rest == "easy" || rest.starts_with("easy/") {
            let one = rest.strip_prefix("easy/");
            let easy = rg_easy(python)?;
            if let Some(t) = one.filter(|t| !easy.iter().any(|(task, _)| task == t)) {
                let tasks: Vec<&str> = easy.iter().map(|(t, _)| t.as_str()).collect();
                bail!("{input}: `{t}` is not one of rg:easy's tasks ({})", tasks.join(", "));
            }
            for (task, config) in easy.into_iter().filter(|(t, _)| one.is_none_or(|o| o == t)) {
                wanted.push((at, format!("rg:easy/{task}"), task, config));
            }
        } else {
            let (task, config) = parse_rg(rest, input)?;
            wanted.push((at, input.clone(), task, config));
        }
    }
    let tasks: Vec<&str> = wanted.iter().map(|w| w.2.as_str()).collect();
    check_rg_tasks(python, &tasks)?;
    let mut out: Vec<Vec<Foreign>> = vec![Vec::new(); inputs.len()];
    for (at, name, task, config) in wanted {
        out[at].push(Foreign { code: rg_code(&name, &task, &config), name });
    }
    Ok(out)
}

/// The `rg:easy` evaluation suite's tasks and settings (its loader's `RG_EASY`).
fn rg_easy(python: &Path) -> anyhow::Result<Vec<(String, serde_json::Map<String, serde_json::Value>)>> {
    let script =
        format!("{}\nimport json\nprint(json.dumps(RG_EASY))\n", spade_evals::python::LOAD_ITEMS.split("\nif __name__").next().unwrap_or(""));
    let out = run_python(python, &script, "rg:easy")?;
    let m: serde_json::Map<String, serde_json::Value> = serde_json::from_str(out.trim()).context("rg:easy settings")?;
    Ok(m.into_iter().map(|(k, v)| (k, v.as_object().cloned().unwrap_or_default())).collect())
}

fn run_python(python: &Path, script: &str, what: &str) -> anyhow::Result<String> {
    let out = Command::new(python).args(["-c", script]).output().with_context(|| format!("{what}: cannot run {} (make venv)", python.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.trim().lines().last().unwrap_or("").to_string();
        bail!("{what}: {last}");
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Every task is one of the installed Reasoning-Gym's.
fn check_rg_tasks(python: &Path, tasks: &[&str]) -> anyhow::Result<()> {
    if tasks.is_empty() {
        return Ok(());
    }
    let script = "import json, sys\ntry:\n    import reasoning_gym\nexcept ImportError:\n    sys.exit('the package reasoning-gym is not installed in this Python (make venv)')\nprint(json.dumps(sorted(reasoning_gym.factory.DATASETS)))\n";
    let names: Vec<String> = serde_json::from_str(run_python(python, script, "rg:")?.trim()).context("Reasoning-Gym's task list")?;
    for t in tasks {
        if !names.iter().any(|n| n == t) {
            bail!(
                "rg:{t}: Reasoning-Gym has no task `{t}` ({} tasks, e.g. {})",
                names.len(),
                names.iter().take(4).cloned().collect::<Vec<_>>().join(", ")
            );
        }
    }
    Ok(())
}

/// What a sandbox needs to play `codes`, set on `cfg`: when any of them is adapter code, the
/// venv's site-packages on the workers' Python path and the collections' packages preloaded.
pub fn sandbox_for<'a>(codes: impl IntoIterator<Item = &'a str>, cfg: SandboxConfig) -> anyhow::Result<SandboxConfig> {
    if !codes.into_iter().any(is_adapter) {
        return Ok(cfg);
    }
    let python_path = spade_evals::site_paths(&spade_evals::venv_python()).context("the Python packages of foreign environments")?;
    Ok(SandboxConfig { python_path, preload: vec!["reasoning_gym".into()], ..cfg })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_code_carries_them() {
        assert!(is_foreign("rg:chain_sum") && is_foreign("rlve:Sorting") && !is_foreign("data/seed-envs") && !is_foreign("x:y"));
        let (t, c) = parse_rg("chain_sum?min_terms=2&max_terms=3&operators=[\"+\"]&mode=hard", "rg:…").unwrap();
        assert_eq!(t, "chain_sum");
        assert_eq!(serde_json::Value::Object(c.clone()).to_string(), r#"{"max_terms":3,"min_terms":2,"mode":"hard","operators":["+"]}"#);
        assert!(parse_rg("chain sum", "rg:chain sum").is_err());
        assert!(parse_rg("chain_sum?x", "rg:chain_sum?x").is_err());
        let code = rg_code("rg:chain_sum?min_terms=2", &t, &c);
        assert!(is_adapter(&code), "{code}");
        assert!(code.contains("# skill: rg:chain_sum?min_terms=2") && !code.contains("__"), "{code}");
        assert!(!is_adapter("# a seed environment\nclass E: pass\n"));
    }
}
