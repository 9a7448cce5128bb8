//! Environments to play, read from tables or seed folders.

use std::path::Path;

use anyhow::Context;
use arrow::array::{Array, StringArray};
use arrow::datatypes::DataType;
use spade_io::TableReader;
use spade_rollout::{EnvSpec, MemoryEnv, Setting};

fn strs(b: &spade_io::Batch, name: &str) -> anyhow::Result<Option<StringArray>> {
    Ok(b.opt_column(name, &DataType::Utf8)?.map(|a| a.as_any().downcast_ref::<StringArray>().expect("utf8").clone()))
}

fn get(a: &Option<StringArray>, i: usize) -> Option<String> {
    a.as_ref().filter(|a| a.is_valid(i)).map(|a| a.value(i).to_string())
}

/// Reads an `envs` table (`env_id`, `code`; `hint`, `skill`, `setting` used when present).
pub fn read_envs(paths: &[String]) -> anyhow::Result<Vec<EnvSpec>> {
    let mut out = Vec::new();
    if paths.is_empty() {
        return Ok(out);
    }
    for b in TableReader::open(paths)?.read_all()? {
        let ids = b.required("env_id", &DataType::Utf8)?;
        let ids = ids.as_any().downcast_ref::<StringArray>().expect("utf8");
        let code = b.required("code", &DataType::Utf8)?;
        let code = code.as_any().downcast_ref::<StringArray>().expect("utf8");
        let (hint, skill, setting) = (strs(&b, "hint")?, strs(&b, "skill")?, strs(&b, "setting")?);
        for i in 0..b.num_rows() {
            if ids.is_null(i) {
                return Err(b.row_error(i, "env_id", "is null").into());
            }
            if code.is_null(i) {
                return Err(b.row_error(i, "code", "is null").into());
            }
            out.push(EnvSpec {
                env_id: ids.value(i).to_string(),
                code: code.value(i).to_string(),
                hint: get(&hint, i),
                skill: get(&skill, i),
                setting: Setting::parse(get(&setting, i).as_deref()),
                origin: "new",
            });
        }
    }
    Ok(out)
}

/// Reads a folder of seed `.py` files (header comments `# skill:`, `# setting:`, `# hint:`), each
/// with the validator's `env_id`, or, when `path` is not a folder, an `envs` or memory table.
pub fn read_envs_or_folder(path: &str) -> anyhow::Result<Vec<EnvSpec>> {
    if !Path::new(path).is_dir() {
        return read_envs(&[path.to_string()]);
    }
    let mut entries = spade_design::memory::read_seed_folder(Path::new(path)).with_context(|| format!("reading {path}"))?;
    if entries.is_empty() {
        anyhow::bail!("{path}: no .py environments in the folder");
    }
    spade_design::memory::set_env_ids(&mut entries, spade_sandbox::validate::env_id);
    Ok(entries
        .into_iter()
        .map(|e| EnvSpec {
            env_id: e.env_id,
            setting: Setting::parse(e.setting.as_deref()),
            code: e.code,
            hint: e.hint,
            skill: e.skill,
            origin: "new",
        })
        .collect())
}

/// Reads an environment memory, with what pool selection needs.
pub fn read_memory(paths: &[String]) -> anyhow::Result<Vec<MemoryEnv>> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let m = spade_selfplay::Memory::from_batches(&TableReader::open(paths)?.read_all()?).context("reading --memory")?;
    Ok(m.entries()
        .iter()
        .map(|e| MemoryEnv {
            env: EnvSpec {
                env_id: e.env_id.clone(),
                code: e.code.clone(),
                hint: e.hint.clone(),
                skill: e.skill.clone(),
                setting: Setting::parse(e.setting.as_deref()),
                origin: "memory",
            },
            last_round: e.last_round,
            label: e.label.clone(),
        })
        .collect())
}
