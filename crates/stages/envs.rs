//! Environments to play, read from tables or seed folders.

use std::path::Path;

use anyhow::Context;
use spade_design::prompt::Document;
use spade_design::StoredEntry;
use spade_io::read_rows;
use spade_rollout::{EnvSpec, MemoryEnv, Setting};
use spade_schema::{EnvRow, MemoryRow, DOCS, ENVS, MEMORY};

/// Reads an `envs` table (`env_id`, `code`; `hint`, `skill`, `setting` used when present).
pub fn read_envs(paths: &[String]) -> anyhow::Result<Vec<EnvSpec>> {
    Ok(read_rows::<EnvRow, _>(paths, &ENVS)?.rows.into_iter().map(|e| spec(e.env_id, e.code, e.hint, e.skill, e.setting, "new")).collect())
}

fn spec(env_id: String, code: String, hint: Option<String>, skill: Option<String>, setting: Option<Setting>, origin: &'static str) -> EnvSpec {
    EnvSpec { env_id, code, hint, skill, setting: setting.unwrap_or_default(), origin }
}

/// Reads a folder of seed `.py` files (header comments `# skill:`, `# setting:`, `# hint:`), each
/// with the validator's `env_id`, a foreign environment by name (`rg:chain_sum`, or `rg:easy` for
/// several; [`crate::foreign`]), or, when `path` is neither, an `envs` or memory table.
pub fn read_envs_or_folder(path: &str) -> anyhow::Result<Vec<EnvSpec>> {
    if crate::foreign::is_foreign(path) {
        let found = crate::foreign::expand(&[path.to_string()], &spade_evals::venv_python())?;
        return Ok(found
            .into_iter()
            .flatten()
            .map(|f| spec(spade_sandbox::validate::env_id(&f.code), f.code, None, Some(f.name), Some(Setting::Games), "new"))
            .collect());
    }
    if !Path::new(path).is_dir() {
        return read_envs(&[path.to_string()]);
    }
    let mut entries = spade_design::memory::read_seed_folder(Path::new(path)).with_context(|| format!("reading {path}"))?;
    if entries.is_empty() {
        anyhow::bail!("{path}: no .py environments in the folder");
    }
    spade_design::memory::set_env_ids(&mut entries, spade_sandbox::validate::env_id);
    Ok(entries.into_iter().map(|e| spec(e.env_id, e.code, e.hint, e.skill, e.setting, "new")).collect())
}

/// The designer's memory: `memory` tables (Parquet/JSONL; `code` required, `env_id`, `hint`,
/// `skill`, `setting`, `label`, `regret`, `nohint_win_rate` used when present), or folders (or
/// single files) of seed `.py` environments, each labelled `seed`, no scores.
pub fn read_design_memory(inputs: &[String]) -> anyhow::Result<Vec<MemoryRow>> {
    let mut out = Vec::new();
    let mut tables = Vec::new();
    for i in inputs {
        if spade_design::memory::is_seed_input(i)? {
            out.extend(spade_design::memory::read_seed_input(i)?);
        } else {
            tables.push(i.clone());
        }
    }
    out.extend(read_rows::<StoredEntry, _>(&tables, &MEMORY)?.rows.into_iter().map(MemoryRow::from));
    Ok(out)
}

/// Documents (`doc_id`, `text`; `domain` used when present): a `docs` table as
/// `spade-sample-corpus` writes it.
pub fn read_docs(paths: &[String]) -> anyhow::Result<Vec<Document>> {
    Ok(read_rows::<Document, _>(paths, &DOCS)?.rows)
}

/// Reads an environment memory, with what pool selection needs.
pub fn read_memory(paths: &[String]) -> anyhow::Result<Vec<MemoryEnv>> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let stored = read_rows::<MemoryRow, _>(paths, &MEMORY).context("reading --memory")?;
    let m = spade_selfplay::Memory::from_rows(stored.rows).map_err(|e| stored.origins.error(e)).context("reading --memory")?;
    Ok(m.entries()
        .iter()
        .map(|e| MemoryEnv {
            env: spec(e.env.env_id.clone(), e.env.code.clone(), e.env.hint.clone(), e.env.skill.clone(), e.env.setting, "memory"),
            last_round: e.last_round,
            label: e.label,
            plays_nohint: e.plays.nohint.plays,
            wins_nohint: e.plays.nohint.wins,
        })
        .collect())
}
