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
//! `rg:easy/<task>`, which also names one of them alone); `rlve:<Identifier>[?difficulty=N]` (one
//! of RLVE's 400 environments from the `rlve-gym` package, its parameter controller advanced N
//! times, 0 by default; `difficulty=L..H`: a window, each episode's difficulty drawn from it by its
//! seed, as RLVE's sliding window does), `rlve:official16` (the 16 environments of the paper's fixed-RLVE runs)
//! and `rlve:all` (all of them), each alias also taking `?difficulty=N`; `gem:<Game>-v0-<level>`
//! (one of GEM's game environments from the `gem-llm` package, e.g. `gem:GuessTheNumber-v0-easy`;
//! `gem:easy` for all of its `-easy` games); `textarena:<Game>-v0[-variant]` (one of TextArena's
//! single-player games from the `textarena` package, e.g. `textarena:GuessTheNumber-v0`).

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context};
use spade_sandbox::SandboxConfig;

/// First-line marker of adapter code: `# … (spade's <collection> adapter, foreign: <name>).`
const MARKER: (&str, &str) = ("(spade's ", " adapter, foreign: ");

const RG_ADAPTER: &str = include_str!("adapters/rg.py");
const RLVE_ADAPTER: &str = include_str!("adapters/rlve.py");
const GEM_ADAPTER: &str = include_str!("adapters/gem.py");
const TEXTARENA_ADAPTER: &str = include_str!("adapters/textarena.py");

/// Collections with a prefix spade knows, built or not, with the Python package each needs and
/// the modules a sandbox playing them preloads.
const COLLECTIONS: &[(&str, Option<&str>, &[&str])] = &[
    ("rg", Some("reasoning-gym"), &["reasoning_gym"]),
    ("rlve", Some("rlve-gym"), &["networkx"]),
    ("gem", Some("gem-llm"), &["gem"]),
    ("textarena", Some("textarena"), &["textarena"]),
];

/// The 16 RLVE environments of the paper's fixed-RLVE baseline runs (the authors' `official16`).
pub const RLVE_OFFICIAL16: &[&str] = &[
    "Division",
    "EuclidGame",
    "GCDOne_Counting",
    "HamiltonianPath",
    "LampChanging",
    "LargestConvexPolygon",
    "Multiplication",
    "PCPPermutation",
    "Path_NoGoingBack_Counting",
    "SAT",
    "ShortestPath",
    "Sorting",
    "SpiralMatrix",
    "SubsequenceReversalLNDS",
    "UndamagedSubmatrixCounting",
    "WYRLevelingGround",
];

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
    input.split_once(':').is_some_and(|(c, _)| COLLECTIONS.iter().any(|(k, ..)| *k == c)) && !Path::new(input).exists()
}

/// The collection whose adapter `code` is (its first line carries [`MARKER`]), if it is one.
pub fn adapter_collection(code: &str) -> Option<&str> {
    let line = code.lines().next().filter(|l| l.starts_with('#'))?;
    let (_, after) = line.split_once(MARKER.0)?;
    let (coll, _) = after.split_once(MARKER.1)?;
    COLLECTIONS.iter().find(|(k, ..)| *k == coll).map(|(k, ..)| *k)
}

/// Whether environment code is adapter code.
pub fn is_adapter(code: &str) -> bool {
    adapter_collection(code).is_some()
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
    let mut rlve: Vec<(usize, Rlve)> = Vec::new();
    let mut gem: Vec<(usize, String, String)> = Vec::new();
    let mut arena: Vec<(usize, String, String)> = Vec::new();
    for (at, input) in inputs.iter().enumerate() {
        let (coll, rest) = input.split_once(':').with_context(|| format!("{input}: not <collection>:<name>"))?;
        match COLLECTIONS.iter().find(|(k, ..)| *k == coll) {
            None => bail!("{input}: unknown environment collection `{coll}` (known: rg, rlve, gem, textarena)"),
            Some((_, None, _)) => bail!("{input}: the `{coll}` adapter is not built yet"),
            Some(_) => {}
        }
        if coll == "textarena" {
            arena.push((at, input.clone(), rest.to_string()));
        } else if coll == "gem" {
            gem.push((at, input.clone(), rest.to_string()));
        } else if coll == "rlve" {
            rlve.push((at, parse_rlve(rest, input)?));
        } else if rest == "easy" || rest.starts_with("easy/") {
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
    if !rlve.is_empty() {
        let classes = rlve_classes(python)?;
        for (at, r) in rlve {
            let ids: Vec<&str> = match &r.id {
                RlveId::All => classes.keys().map(String::as_str).collect(),
                RlveId::Official16 => RLVE_OFFICIAL16.to_vec(),
                RlveId::One(id) => vec![id.as_str()],
            };
            for id in ids {
                let Some((env, controller)) = classes.get(id) else {
                    let near: Vec<&str> =
                        classes.keys().filter(|k| k.to_lowercase().contains(&id.to_lowercase())).map(String::as_str).take(4).collect();
                    bail!(
                        "{}: RLVE has no environment `{id}` ({} environments{})",
                        r.input,
                        classes.len(),
                        if near.is_empty() { ", e.g. Division, Sorting".to_string() } else { format!("; similar: {}", near.join(", ")) }
                    );
                };
                let name = match r.difficulty {
                    (0, 0) => format!("rlve:{id}"),
                    (lo, hi) if lo == hi => format!("rlve:{id}?difficulty={lo}"),
                    (lo, hi) => format!("rlve:{id}?difficulty={lo}..{hi}"),
                };
                out[at].push(Foreign { code: rlve_code(&name, id, env, controller, r.difficulty), name });
            }
        }
    }
    if !gem.is_empty() {
        let games = gem_games(python)?;
        for (at, input, rest) in gem {
            let ids: Vec<&String> = if rest == "easy" {
                games.iter().filter(|g| g.ends_with("-easy")).collect()
            } else {
                let id = if rest.contains(':') { rest.clone() } else { format!("game:{rest}") };
                if !id.starts_with("game:") {
                    bail!("{input}: spade plays GEM's game: environments (the others read datasets from the Hugging Face hub)");
                }
                let Some(found) = games.iter().find(|g| **g == id) else {
                    let base = rest.split('-').next().unwrap_or("").to_lowercase();
                    let near: Vec<&str> = games.iter().filter(|g| g.to_lowercase().contains(&base)).map(|g| g.as_str()).take(4).collect();
                    bail!(
                        "{input}: GEM has no game `{rest}` ({} games{})",
                        games.len(),
                        if near.is_empty() { ", e.g. GuessTheNumber-v0-easy".to_string() } else { format!("; similar: {}", near.join(", ")) }
                    );
                };
                vec![found]
            };
            for id in ids {
                let name = format!("gem:{}", id.trim_start_matches("game:"));
                let code = GEM_ADAPTER.replace("__ID_JSON__", &py_str(&py_str(id))).replace("__ID__", id).replace("__NAME__", &name);
                out[at].push(Foreign { code, name });
            }
        }
    }
    if !arena.is_empty() {
        let games = textarena_games(python)?;
        for (at, input, id) in arena {
            match games.get(&id) {
                Some(true) => {}
                Some(false) => bail!("{input}: `{id}` is a game for several players; spade plays TextArena's single-player games"),
                None => {
                    let base = id.split('-').next().unwrap_or("").to_lowercase();
                    let near: Vec<&str> = games.keys().filter(|g| g.to_lowercase().starts_with(&base)).map(String::as_str).take(4).collect();
                    bail!(
                        "{input}: TextArena has no game `{id}` ({} registered{})",
                        games.len(),
                        if near.is_empty() { ", e.g. GuessTheNumber-v0".to_string() } else { format!("; similar: {}", near.join(", ")) }
                    );
                }
            }
            let name = format!("textarena:{id}");
            let code = TEXTARENA_ADAPTER.replace("__ID_JSON__", &py_str(&py_str(&id))).replace("__ID__", &id).replace("__NAME__", &name);
            out[at].push(Foreign { code, name });
        }
    }
    Ok(out)
}

/// TextArena's registered environments, each with whether it is a single-player game (its module
/// keeps a `SinglePlayerState`; read from the module's file, not imported).
fn textarena_games(python: &Path) -> anyhow::Result<std::collections::BTreeMap<String, bool>> {
    let script =
        "import json, os, sys\ntry:\n    from textarena.envs.registration import ENV_REGISTRY\n    import textarena\nexcept ImportError as e:\n    \
sys.exit('the package textarena is not installed in this Python (make venv): %s' % e)\n\
root = os.path.dirname(os.path.dirname(textarena.__file__))\nsingle = {}\nout = {}\n\
def reads(m):\n    path = os.path.join(root, *m.split('.'))\n    \
for f in (path + '.py', os.path.join(path, '__init__.py')):\n        \
if os.path.exists(f):\n            return 'SinglePlayerState' in open(f).read()\n    return False\n\
for k, s in ENV_REGISTRY.items():\n    m = s.entry_point.split(':')[0] if isinstance(s.entry_point, str) else s.entry_point.__module__\n    \
if m not in single:\n        single[m] = reads(m)\n    out[k] = single[m]\n\
print(json.dumps(out))\n";
    serde_json::from_str(run_python(python, script, "textarena:")?.trim()).context("TextArena's game list")
}

/// GEM's registered game environments (`game:<Game>-v0-<level>`), from the installed package.
fn gem_games(python: &Path) -> anyhow::Result<Vec<String>> {
    let script = "import json, sys\ntry:\n    import gem\n    from gem.envs.registration import ENV_REGISTRY\nexcept ImportError as e:\n    \
sys.exit('the package gem-llm is not installed in this Python (make venv): %s' % e)\n\
print(json.dumps(sorted(k for k in ENV_REGISTRY if k.startswith('game:'))))\n";
    serde_json::from_str(run_python(python, script, "gem:")?.trim()).context("GEM's game list")
}

enum RlveId {
    All,
    Official16,
    One(String),
}

struct Rlve {
    input: String,
    id: RlveId,
    /// The difficulty window (one difficulty when both are equal).
    difficulty: (u16, u16),
}

/// `rlve:<Identifier|official16|all>[?difficulty=N|L..H]`.
fn parse_rlve(rest: &str, input: &str) -> anyhow::Result<Rlve> {
    let (id, query) = rest.split_once('?').unwrap_or((rest, ""));
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        bail!("{input}: `{id}` is not an RLVE environment identifier (letters, digits and _, e.g. rlve:Division)");
    }
    let mut difficulty = (0u16, 0u16);
    for kv in query.split('&').filter(|s| !s.is_empty()) {
        match kv.split_once('=') {
            Some(("difficulty", v)) => {
                let bad = || anyhow::anyhow!("{input}: difficulty `{v}` is not a whole number 0..65535 or a window L..H with L <= H");
                let (lo, hi) = v.split_once("..").unwrap_or((v, v));
                difficulty = (lo.parse().map_err(|_| bad())?, hi.parse().map_err(|_| bad())?);
                if difficulty.0 > difficulty.1 {
                    return Err(bad());
                }
            }
            _ => bail!("{input}: `{kv}` is not difficulty=N or difficulty=L..H (the one setting an RLVE environment takes)"),
        }
    }
    let id = match id {
        "all" => RlveId::All,
        "official16" => RlveId::Official16,
        one => RlveId::One(one.to_string()),
    };
    Ok(Rlve { input: input.to_string(), id, difficulty })
}

fn rlve_code(name: &str, id: &str, env: &str, controller: &str, (lo, hi): (u16, u16)) -> String {
    RLVE_ADAPTER
        .replace("__ID_JSON__", &py_str(&py_str(id)))
        .replace("__ENV_JSON__", &py_str(&py_str(env)))
        .replace("__CONTROLLER_JSON__", &py_str(&py_str(controller)))
        .replace("__LOW__", &lo.to_string())
        .replace("__HIGH__", &hi.to_string())
        .replace("__ID__", id)
        .replace("__NAME__", name)
}

/// RLVE's environments by identifier: (environment class, parameter controller class), each as
/// `module.Class`, read from the installed package's own tables.
fn rlve_classes(python: &Path) -> anyhow::Result<std::collections::BTreeMap<String, (String, String)>> {
    let script = "import json, sys, types\n\
try:\n    import torch\nexcept ImportError:\n    shim = types.ModuleType('torch'); shim.manual_seed = lambda s: None\n    \
shim.cuda = types.SimpleNamespace(manual_seed_all=lambda s: None); sys.modules['torch'] = shim\n\
try:\n    from Gym.environments import identifier2environment as E\n    \
from Gym.parameter_controllers import identifier2controller as C\nexcept ImportError as e:\n    \
sys.exit('the package rlve-gym is not installed in this Python (make venv): %s' % e)\n\
path = lambda c: c.__module__ + '.' + c.__name__\n\
print(json.dumps({k: [path(E[k]), path(C[k])] for k in E if k in C}))\n";
    let out = run_python(python, script, "rlve:")?;
    serde_json::from_str(out.trim()).context("RLVE's environment list")
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
    let mut preload: Vec<String> = Vec::new();
    let mut any = false;
    for coll in codes.into_iter().filter_map(adapter_collection) {
        any = true;
        let (_, _, modules) = COLLECTIONS.iter().find(|(k, ..)| *k == coll).expect("adapter_collection names a known collection");
        for m in modules.iter() {
            if !preload.iter().any(|p| p == m) {
                preload.push(m.to_string());
            }
        }
    }
    if !any {
        return Ok(cfg);
    }
    let python_path = spade_evals::site_paths(&spade_evals::venv_python()).context("the Python packages of foreign environments")?;
    Ok(SandboxConfig { python_path, preload, ..cfg })
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
        assert_eq!(adapter_collection(&code), Some("rg"));
    }

    #[test]
    fn rlve_names_parse_and_code_carries_them() {
        let r = parse_rlve("Division?difficulty=3", "rlve:Division?difficulty=3").unwrap();
        assert!(matches!(&r.id, RlveId::One(id) if id == "Division") && r.difficulty == (3, 3));
        assert_eq!(parse_rlve("Division?difficulty=2..5", "rlve:…").unwrap().difficulty, (2, 5));
        assert!(matches!(parse_rlve("official16", "rlve:official16").unwrap().id, RlveId::Official16));
        assert!(matches!(parse_rlve("all?difficulty=1", "rlve:all").unwrap().id, RlveId::All));
        for bad in [
            "Div ision",
            "",
            "Division?difficulty=-1",
            "Division?difficulty=x",
            "Division?level=2",
            "Division?difficulty=5..2",
            "Division?difficulty=1..x",
        ] {
            let e = parse_rlve(bad, &format!("rlve:{bad}")).err().unwrap_or_else(|| panic!("{bad} parsed")).to_string();
            assert!(e.starts_with(&format!("rlve:{bad}: ")), "{e}");
        }
        let code =
            rlve_code("rlve:Division?difficulty=3", "Division", "Gym.environments.division.environment.Division_Environment", "Gym.x.C", (3, 3));
        assert_eq!(adapter_collection(&code), Some("rlve"), "{code}");
        assert!(
            code.contains("# skill: rlve:Division?difficulty=3")
                && code.contains("_LOW, _HIGH = 3, 3")
                && !code.contains("__ID")
                && !code.contains("_JSON__"),
            "{code}"
        );
    }
}
