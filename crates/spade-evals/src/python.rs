//! The Python side: the adapters (embedded) and the project's venv.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

/// Item loader (trusted; run by the venv's Python).
pub const LOAD_ITEMS: &str = include_str!("../python/load_items.py");
/// Scorer module (untrusted input; run inside the sandbox).
pub const SCORE: &str = include_str!("../python/score.py");

/// Environment variable naming the Python that has the evaluation packages.
pub const PYTHON_ENV: &str = "SPADE_PYTHON";

/// The Python with the evaluation packages: `$SPADE_PYTHON` (set by the Makefile), else `.venv/bin/python` in the
/// current folder, else the venv of spade's home ([`spade_model::home`]: `$SPADE_HOME`, or the spade tree
/// the running program was built in).
pub fn venv_python() -> PathBuf {
    if let Some(p) = std::env::var_os(PYTHON_ENV).filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let local = PathBuf::from(".venv/bin/python");
    if local.exists() {
        return local;
    }
    Some(spade_model::home().join(".venv/bin/python")).filter(|p| p.exists()).unwrap_or(local)
}

/// The site-packages folders of `python` (made importable, read-only, in the sandbox).
pub fn site_paths(python: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let out = Command::new(python)
        .args(["-c", "import json, site; print(json.dumps(site.getsitepackages()))"])
        .output()
        .with_context(|| format!("cannot run {} (make venv)", python.display()))?;
    if !out.status.success() {
        bail!("{}: cannot list its site-packages: {}", python.display(), String::from_utf8_lossy(&out.stderr).trim());
    }
    let list: Vec<String> = serde_json::from_slice(&out.stdout).context("site-packages list")?;
    Ok(list.into_iter().map(PathBuf::from).filter(|p| p.is_dir()).map(|p| p.canonicalize().unwrap_or(p)).collect())
}
