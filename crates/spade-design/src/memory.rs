//! The designer's view of the environment memory: seeds (examples) and negatives (too easy / too
//! hard), read from a `memory` table or from a folder of seed `.py` environments (header comments
//! `# skill:`, `# setting:`, `# hint:`), and chosen deterministically for a prompt.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use spade_schema::{Label, MemoryRow, Setting};

use crate::{hash_hex, Error, Result};

/// The first class name ending in `Env`, else the first class name of `code`.
pub fn class_name(code: &str) -> Option<String> {
    let names: Vec<String> = code
        .lines()
        .filter_map(|l| l.strip_prefix("class "))
        .map(|rest| rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>())
        .filter(|n| !n.is_empty())
        .collect();
    names.iter().find(|n| n.ends_with("Env")).or(names.first()).cloned()
}

/// Header comment `# key: value` among the leading comment lines of `code`.
pub fn header(code: &str, key: &str) -> Option<String> {
    for line in code.lines() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let Some(c) = t.strip_prefix('#') else { break };
        if let Some((k, v)) = c.split_once(':') {
            if k.trim().eq_ignore_ascii_case(key) {
                let v = v.trim();
                return (!v.is_empty()).then(|| v.to_string());
            }
        }
    }
    None
}

const HEADER_KEYS: [&str; 4] = ["skill", "skills", "setting", "hint"];

/// `code` without the leading header comments (`# skill:`, `# setting:`, `# hint:`).
pub fn strip_header(code: &str) -> String {
    let lines = code.lines().peekable();
    let mut out = Vec::new();
    let mut in_header = true;
    for line in lines {
        if in_header {
            let t = line.trim();
            let is_key = t
                .strip_prefix('#')
                .and_then(|c| c.split_once(':'))
                .map(|(k, _)| HEADER_KEYS.iter().any(|h| k.trim().eq_ignore_ascii_case(h)))
                .unwrap_or(false);
            if is_key {
                continue;
            }
            in_header = false;
        }
        out.push(line);
    }
    let mut s = out.join("\n");
    if code.ends_with('\n') {
        s.push('\n');
    }
    s
}

/// Whether `input` names seed `.py` environments (a folder holding some, or one `.py` file) rather
/// than a table.
pub fn is_seed_input(input: &str) -> Result<bool> {
    let p = Path::new(input);
    Ok((p.is_dir() && has_py(p)?) || (p.is_file() && p.extension().is_some_and(|e| e == "py")))
}

/// The entries of seed `.py` input (a folder, or one file), each labelled `seed`, no scores.
pub fn read_seed_input(input: &str) -> Result<Vec<MemoryRow>> {
    let p = Path::new(input);
    if p.is_dir() {
        read_seed_folder(p)
    } else {
        Ok(vec![read_seed_file(p)?])
    }
}

fn has_py(dir: &Path) -> Result<bool> {
    Ok(!py_files(dir)?.is_empty())
}

/// The `.py` files of a folder, in name order (a seed pool).
pub fn py_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let rd = std::fs::read_dir(dir).map_err(|e| Error::Io(format!("{}: {e}", dir.display())))?;
    let mut v: Vec<PathBuf> =
        rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "py")).collect();
    v.sort();
    Ok(v)
}

/// Every `.py` file of a folder, in name order, as `seed` entries.
pub fn read_seed_folder(dir: &Path) -> Result<Vec<MemoryRow>> {
    py_files(dir)?.iter().map(|p| read_seed_file(p)).collect()
}

/// One seed `.py` file as a `seed` entry; `env_id` is the content hash the caller's validator
/// would give it only if the same function is used — here the crate's own [`hash_hex`] of the
/// code, replaced by [`set_env_ids`] when the caller has the validator's function.
pub fn read_seed_file(p: &Path) -> Result<MemoryRow> {
    let code = std::fs::read_to_string(p).map_err(|e| Error::Io(format!("{}: {e}", p.display())))?;
    // The environment only: a reference solver after its marker line is not part of it.
    let (code, solver) = spade_sandbox::validate::split_solver(&code);
    Ok(MemoryRow {
        env_id: hash_hex(&["seed-file", &code]),
        hint: header(&code, "hint"),
        skill: header(&code, "skill"),
        setting: header_setting(&code),
        code,
        label: Label::Seed,
        solver,
        ..Default::default()
    })
}

/// Replaces every entry's `env_id` by `f(code)` (e.g. the validator's content hash) for entries
/// read from `.py` files.
pub fn set_env_ids(entries: &mut [MemoryRow], f: impl Fn(&str) -> String) {
    for e in entries {
        if e.env_id == hash_hex(&["seed-file", &e.code]) {
            e.env_id = f(&e.code);
        }
    }
}

/// The columns of a `memory` (or `envs`) row the designer reads: `code`, and `env_id`, `hint`,
/// `skill`, `setting`, `label`, `regret`, `nohint_win_rate` and a `solver` column when present.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct StoredEntry {
    pub env_id: Option<String>,
    pub code: String,
    pub hint: Option<String>,
    pub skill: Option<String>,
    pub setting: Option<String>,
    pub label: Option<Label>,
    pub regret: Option<f64>,
    pub nohint_win_rate: Option<f64>,
    pub solver: Option<String>,
}

impl From<StoredEntry> for MemoryRow {
    /// A stored entry; what the row leaves out comes from the code's header comments, and an
    /// entry without `env_id` gets the code's hash (as a seed file does).
    fn from(r: StoredEntry) -> MemoryRow {
        let c = r.code;
        MemoryRow {
            env_id: r.env_id.unwrap_or_else(|| hash_hex(&["seed-file", &c])),
            hint: r.hint.or_else(|| header(&c, "hint")),
            skill: r.skill.or_else(|| header(&c, "skill")),
            setting: r.setting.map(|s| Setting::parse(Some(&s))).or_else(|| header_setting(&c)),
            label: r.label.unwrap_or_default(),
            regret: r.regret.filter(|x| x.is_finite()),
            nohint_win_rate: r.nohint_win_rate.filter(|x| x.is_finite()),
            solver: r.solver,
            code: c,
            ..Default::default()
        }
    }
}

/// The `# setting:` header of `code`, read leniently ([`Setting::parse`]).
pub fn header_setting(code: &str) -> Option<Setting> {
    header(code, "setting").map(|s| Setting::parse(Some(&s)))
}

/// Up to `n` seed examples for a prompt asking for `skill` in `setting`.
///
/// Candidates are entries labelled `seed`, preferred in this order: same skill and setting, then
/// same setting (any skill), then same skill (other setting), then any seed. Within a tier, the
/// highest regret first (unscored last); ties are broken by a hash of `(tie_key, env_id)`, so
/// different documents see different examples when regrets are equal, and the choice is
/// deterministic.
pub fn choose_examples<'a>(memory: &'a [MemoryRow], skill: &str, setting: Setting, n: usize, tie_key: &str) -> Vec<&'a MemoryRow> {
    let seeds: Vec<&MemoryRow> = memory.iter().filter(|e| e.label == Label::Seed).collect();
    let same = |a: &Option<String>, b: &str| a.as_deref().is_some_and(|x| x.eq_ignore_ascii_case(b));
    let tier = |e: &MemoryRow| match (same(&e.skill, skill), e.setting.unwrap_or_default() == setting) {
        (true, true) => 0,
        (false, true) => 1,
        (true, false) => 2,
        (false, false) => 3,
    };
    let mut v: Vec<(u8, f64, String, &MemoryRow)> =
        seeds.into_iter().map(|e| (tier(e), e.regret.unwrap_or(f64::NEG_INFINITY), hash_hex(&[tie_key, &e.env_id]), e)).collect();
    v.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)).then(a.2.cmp(&b.2)));
    let mut out: Vec<&MemoryRow> = Vec::new();
    for (_, _, _, e) in v {
        if out.len() >= n {
            break;
        }
        if !out.iter().any(|o| o.env_id == e.env_id) {
            out.push(e);
        }
    }
    out
}

/// Up to `n` negatives (labelled `too-easy` or `too-hard`): same skill first, then any skill;
/// the most extreme no-hint win rate first (ties by hash of `(tie_key, env_id)`).
pub fn choose_negatives<'a>(memory: &'a [MemoryRow], skill: &str, n: usize, tie_key: &str) -> Vec<&'a MemoryRow> {
    let mut v: Vec<(u8, f64, String, &MemoryRow)> = memory
        .iter()
        .filter(|e| matches!(e.label, Label::TooEasy | Label::TooHard))
        .map(|e| {
            let same = e.skill.as_deref().is_some_and(|s| s.eq_ignore_ascii_case(skill));
            let extreme = e.nohint_win_rate.map(|w| (w - 0.5).abs()).unwrap_or(0.0);
            (u8::from(!same), extreme, hash_hex(&[tie_key, &e.env_id]), e)
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)).then(a.2.cmp(&b.2)));
    // Alternate the labels so both kinds of failure are described when both exist.
    let sorted: Vec<&MemoryRow> = v.into_iter().map(|x| x.3).collect();
    let mut out: Vec<&MemoryRow> = Vec::new();
    while out.len() < n {
        let unused = |e: &MemoryRow| !out.iter().any(|o| o.env_id == e.env_id);
        let want_other = out.last().map(|l| l.label);
        let pick = sorted
            .iter()
            .copied()
            .find(|e| unused(e) && want_other.is_none_or(|l| e.label != l))
            .or_else(|| sorted.iter().copied().find(|e| unused(e)));
        match pick {
            Some(e) => out.push(e),
            None => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, skill: &str, setting: &str, label: &str, regret: Option<f64>, wr: Option<f64>) -> MemoryRow {
        MemoryRow {
            env_id: id.into(),
            code: format!("# skill: {skill}\n# hint: h\nclass {id}Env:\n    pass\n"),
            hint: Some("h".into()),
            skill: Some(skill.into()),
            setting: Some(setting.parse().unwrap()),
            label: label.parse().unwrap(),
            regret,
            nohint_win_rate: wr,
            ..Default::default()
        }
    }

    #[test]
    fn examples_prefer_skill_setting_and_regret() {
        let m = vec![
            entry("a", "logic", "games", "seed", Some(0.1), None),
            entry("b", "logic", "games", "seed", Some(0.5), None),
            entry("c", "logic", "games", "none", Some(0.9), None),
            entry("d", "math", "games", "seed", Some(0.9), None),
            entry("e", "logic", "tool-use", "seed", Some(0.9), None),
        ];
        let ids = |v: Vec<&MemoryRow>| v.iter().map(|e| e.env_id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(choose_examples(&m, "logic", Setting::Games, 2, "k")), ["b", "a"]);
        assert_eq!(ids(choose_examples(&m, "logic", Setting::Games, 3, "k")), ["b", "a", "d"]);
        assert_eq!(ids(choose_examples(&m, "logic", Setting::ToolUse, 2, "k")), ["e", "b"]);
        // fallback: any seed
        assert_eq!(ids(choose_examples(&m, "spatial", Setting::Games, 1, "k")), ["d"]);
        assert!(choose_examples(&[], "x", Setting::Games, 2, "k").is_empty());
    }

    #[test]
    fn negatives_are_too_easy_or_too_hard() {
        let m = vec![
            entry("a", "logic", "games", "too-easy", None, Some(0.99)),
            entry("b", "math", "games", "too-hard", None, Some(0.0)),
            entry("c", "logic", "games", "seed", None, Some(0.5)),
            entry("d", "logic", "games", "too-hard", None, Some(0.05)),
        ];
        let v: Vec<_> = choose_negatives(&m, "logic", 2, "k").iter().map(|e| e.env_id.clone()).collect();
        assert_eq!(v, ["a", "d"]);
        let v: Vec<_> = choose_negatives(&m, "math", 2, "k").iter().map(|e| e.env_id.clone()).collect();
        assert_eq!(v, ["b", "a"], "same skill first, then the other label");
    }

    #[test]
    fn headers_parse_and_strip() {
        let code = "# skill: logic\n# setting: games\n# hint: think\nimport re\n# not a header: x\nclass FooEnv:\n    pass\n";
        assert_eq!(header(code, "hint").as_deref(), Some("think"));
        assert_eq!(header(code, "skill").as_deref(), Some("logic"));
        assert_eq!(header(code, "missing"), None);
        assert_eq!(strip_header(code), "import re\n# not a header: x\nclass FooEnv:\n    pass\n");
        assert_eq!(class_name(code).as_deref(), Some("FooEnv"));
    }

    #[test]
    fn seed_folder_reads_every_file() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/seed-envs");
        let m = read_seed_folder(&dir).unwrap();
        assert!(m.len() >= 6);
        assert!(m.iter().all(|e| e.label == Label::Seed && e.skill.is_some() && e.hint.is_some() && class_name(&e.code).is_some()));
    }
}
