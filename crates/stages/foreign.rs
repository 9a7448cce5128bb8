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
/// The one reading of a reply's answer (its last `\boxed{}`, else its `<answer>` tags, else its
/// last number when the reference answer is a number, else its last line), spliced into the rg and
/// rlve adapters where they say `__ANSWER_READER__`.
const ANSWER_READER: &str = include_str!("adapters/answer.py");
/// Lists what an installed collection holds (`python -c CATALOG <collection>`).
const CATALOG: &str = include_str!("adapters/catalog.py");

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

type Config = serde_json::Map<String, serde_json::Value>;

/// `rg:<task>[?k=v&…]` → (task, config object); values are JSON, else strings.
fn parse_rg(rest: &str, input: &str) -> anyhow::Result<(String, Config)> {
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

/// An adapter's code: `template` with each `__KEY__` replaced (the JSON-valued `__…_JSON__` keys
/// hold a Python literal of a JSON text, so a name stays data), then `__NAME__` by `name`.
fn fill(template: &str, name: &str, keys: &[(&str, String)]) -> String {
    let mut code = template.to_string();
    for (k, v) in keys {
        code = code.replace(k, v);
    }
    code.replace("__NAME__", name)
}

/// A Python literal of a JSON string of `s`, for an adapter's `__…_JSON__` key.
fn json_lit(s: &str) -> String {
    py_str(&py_str(s))
}

fn rg_code(name: &str, task: &str, config: &Config) -> String {
    let config = serde_json::Value::Object(config.clone()).to_string();
    fill(
        RG_ADAPTER,
        name,
        &[
            ("__ANSWER_READER__", ANSWER_READER.trim_end().to_string()),
            ("__TASK_JSON__", json_lit(task)),
            ("__CONFIG_JSON__", py_str(&config)),
            ("__TASK__", task.to_string()),
        ],
    )
}

fn rlve_code(name: &str, id: &str, env: &str, controller: &str, (lo, hi): (u16, u16)) -> String {
    fill(
        RLVE_ADAPTER,
        name,
        &[
            ("__ANSWER_READER__", ANSWER_READER.trim_end().to_string()),
            ("__ID_JSON__", json_lit(id)),
            ("__ENV_JSON__", json_lit(env)),
            ("__CONTROLLER_JSON__", json_lit(controller)),
            ("__LOW__", lo.to_string()),
            ("__HIGH__", hi.to_string()),
            ("__ID__", id.to_string()),
        ],
    )
}

/// The code of an adapter whose one setting is the package's environment id (GEM, TextArena).
fn id_code(template: &str, name: &str, id: &str) -> String {
    fill(template, name, &[("__ID_JSON__", json_lit(id)), ("__ID__", id.to_string())])
}

/// The error for a name the installed package does not have, with up to four similar ones.
fn no_such<'a>(input: &str, what: &str, known: impl Iterator<Item = &'a str>, total: usize, like: &str, example: &str) -> anyhow::Error {
    let like = like.to_lowercase();
    let near: Vec<&str> = known.filter(|k| !like.is_empty() && k.to_lowercase().contains(&like)).take(4).collect();
    let more = if near.is_empty() { format!(", e.g. {example}") } else { format!("; similar: {}", near.join(", ")) };
    anyhow::anyhow!("{input}: {what} ({total} in the installed package{more})")
}

/// The environments `inputs` name (each a foreign name; an alias such as `rg:easy` names
/// several), one list per input, their names checked against the installed packages by `python`
/// (the project's venv): an unknown collection, a collection not built yet, a missing package or
/// an unknown task is an error naming it.
pub fn expand(inputs: &[String], python: &Path) -> anyhow::Result<Vec<Vec<Foreign>>> {
    let mut named: Vec<(usize, &str, &str)> = Vec::new();
    for (at, input) in inputs.iter().enumerate() {
        let (coll, rest) = input.split_once(':').with_context(|| format!("{input}: not <collection>:<name>"))?;
        match COLLECTIONS.iter().find(|(k, ..)| *k == coll) {
            None => bail!("{input}: unknown environment collection `{coll}` (known: rg, rlve, gem, textarena)"),
            Some((_, None, _)) => bail!("{input}: the `{coll}` adapter is not built yet"),
            Some(_) => named.push((at, coll, rest)),
        }
    }
    let mut out: Vec<Vec<Foreign>> = vec![Vec::new(); inputs.len()];
    for (coll, expand_one) in [("rg", expand_rg as Expander), ("rlve", expand_rlve), ("gem", expand_gem), ("textarena", expand_textarena)] {
        let mine: Vec<(usize, &str, &str)> = named.iter().copied().filter(|(_, c, _)| *c == coll).collect();
        if mine.is_empty() {
            continue;
        }
        let asked: Vec<(&str, &str)> = mine.iter().map(|&(at, _, rest)| (inputs[at].as_str(), rest)).collect();
        for (&(at, ..), found) in mine.iter().zip(expand_one(&asked, python)?) {
            out[at] = found;
        }
    }
    Ok(out)
}

/// One collection's expansion: (input, the name after the prefix) → its environments, per input.
type Expander = fn(&[(&str, &str)], &Path) -> anyhow::Result<Vec<Vec<Foreign>>>;

/// What an installed collection holds (`adapters/catalog.py`), parsed from its JSON.
fn catalog<T: serde::de::DeserializeOwned>(python: &Path, coll: &str) -> anyhow::Result<T> {
    let what = format!("{coll}:");
    let out =
        Command::new(python).args(["-c", CATALOG, coll]).output().with_context(|| format!("{what} cannot run {} (make venv)", python.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        bail!("{what} {}", err.trim().lines().last().unwrap_or(""));
    }
    serde_json::from_slice(&out.stdout).with_context(|| format!("{what} the installed package's list of environments"))
}

fn expand_rg(named: &[(&str, &str)], python: &Path) -> anyhow::Result<Vec<Vec<Foreign>>> {
    let tasks: Vec<String> = catalog(python, "rg")?;
    let mut out = Vec::new();
    for (input, rest) in named {
        let wanted: Vec<(String, String, Config)> = if *rest == "easy" || rest.starts_with("easy/") {
            let one = rest.strip_prefix("easy/");
            let easy = rg_easy(python)?;
            if let Some(t) = one.filter(|t| !easy.iter().any(|(task, _)| task == t)) {
                let tasks: Vec<&str> = easy.iter().map(|(t, _)| t.as_str()).collect();
                bail!("{input}: `{t}` is not one of rg:easy's tasks ({})", tasks.join(", "));
            }
            easy.into_iter().filter(|(t, _)| one.is_none_or(|o| o == t)).map(|(t, c)| (format!("rg:easy/{t}"), t, c)).collect()
        } else {
            let (task, config) = parse_rg(rest, input)?;
            vec![(input.to_string(), task, config)]
        };
        let mut found = Vec::new();
        for (name, task, config) in wanted {
            if !tasks.contains(&task) {
                let what = format!("Reasoning-Gym has no task `{task}`");
                return Err(no_such(&format!("rg:{task}"), &what, tasks.iter().map(String::as_str), tasks.len(), &task, "chain_sum, gcd"));
            }
            found.push(Foreign { code: rg_code(&name, &task, &config), name });
        }
        out.push(found);
    }
    Ok(out)
}

fn expand_rlve(named: &[(&str, &str)], python: &Path) -> anyhow::Result<Vec<Vec<Foreign>>> {
    let parsed: Vec<Rlve> = named.iter().map(|(input, rest)| parse_rlve(rest, input)).collect::<anyhow::Result<_>>()?;
    let classes: std::collections::BTreeMap<String, (String, String)> = catalog(python, "rlve")?;
    let mut out = Vec::new();
    for r in parsed {
        let ids: Vec<&str> = match &r.id {
            RlveId::All => classes.keys().map(String::as_str).collect(),
            RlveId::Official16 => RLVE_OFFICIAL16.to_vec(),
            RlveId::One(id) => vec![id.as_str()],
        };
        let mut found = Vec::new();
        for id in ids {
            let Some((env, controller)) = classes.get(id) else {
                let what = format!("RLVE has no environment `{id}`");
                return Err(no_such(&r.input, &what, classes.keys().map(String::as_str), classes.len(), id, "Division, Sorting"));
            };
            let name = match r.difficulty {
                (0, 0) => format!("rlve:{id}"),
                (lo, hi) if lo == hi => format!("rlve:{id}?difficulty={lo}"),
                (lo, hi) => format!("rlve:{id}?difficulty={lo}..{hi}"),
            };
            found.push(Foreign { code: rlve_code(&name, id, env, controller, r.difficulty), name });
        }
        out.push(found);
    }
    Ok(out)
}

/// `gem:<Game>-v0-<level>` (or `gem:game:<…>`), `gem:easy`: GEM's game environments only (its
/// others read datasets from the Hugging Face hub).
fn expand_gem(named: &[(&str, &str)], python: &Path) -> anyhow::Result<Vec<Vec<Foreign>>> {
    let games: Vec<String> = catalog(python, "gem")?;
    let mut out = Vec::new();
    for (input, rest) in named {
        let ids: Vec<&String> = if *rest == "easy" {
            games.iter().filter(|g| g.ends_with("-easy")).collect()
        } else {
            let id = if rest.contains(':') { rest.to_string() } else { format!("game:{rest}") };
            if !id.starts_with("game:") {
                bail!("{input}: spade plays GEM's game: environments (the others read datasets from the Hugging Face hub)");
            }
            let Some(found) = games.iter().find(|g| **g == id) else {
                let what = format!("GEM has no game `{rest}`");
                let base = rest.split('-').next().unwrap_or("");
                return Err(no_such(input, &what, games.iter().map(String::as_str), games.len(), base, "GuessTheNumber-v0-easy"));
            };
            vec![found]
        };
        out.push(
            ids.into_iter()
                .map(|id| {
                    let name = format!("gem:{}", id.trim_start_matches("game:"));
                    Foreign { code: id_code(GEM_ADAPTER, &name, id), name }
                })
                .collect(),
        );
    }
    Ok(out)
}

/// `textarena:<Game>-v0[-variant]`: TextArena's single-player games.
fn expand_textarena(named: &[(&str, &str)], python: &Path) -> anyhow::Result<Vec<Vec<Foreign>>> {
    let games: std::collections::BTreeMap<String, bool> = catalog(python, "textarena")?;
    let mut out = Vec::new();
    for (input, id) in named {
        match games.get(*id) {
            Some(true) => {}
            Some(false) => bail!("{input}: `{id}` is a game for several players; spade plays TextArena's single-player games"),
            None => {
                let what = format!("TextArena has no game `{id}`");
                let base = id.split('-').next().unwrap_or("");
                return Err(no_such(input, &what, games.keys().map(String::as_str), games.len(), base, "GuessTheNumber-v0"));
            }
        }
        let name = format!("textarena:{id}");
        out.push(vec![Foreign { code: id_code(TEXTARENA_ADAPTER, &name, id), name }]);
    }
    Ok(out)
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

/// The `rg:easy` evaluation suite's tasks and settings (its loader's `RG_EASY`).
fn rg_easy(python: &Path) -> anyhow::Result<Vec<(String, Config)>> {
    let script =
        format!("{}\nimport json\nprint(json.dumps(RG_EASY))\n", spade_evals::python::LOAD_ITEMS.split("\nif __name__").next().unwrap_or(""));
    let out = Command::new(python).args(["-c", &script]).output().with_context(|| format!("rg:easy: cannot run {} (make venv)", python.display()))?;
    if !out.status.success() {
        bail!("rg:easy: {}", String::from_utf8_lossy(&out.stderr).trim().lines().last().unwrap_or(""));
    }
    let m: Config = serde_json::from_slice(&out.stdout).context("rg:easy settings")?;
    Ok(m.into_iter().map(|(k, v)| (k, v.as_object().cloned().unwrap_or_default())).collect())
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
        assert!(code.contains("def _answer(reply, gold):") && !code.contains("__ANSWER_READER__"), "the shared reader spliced in: {code}");
    }
}
