//! Where things are and how the process is set up, for any program that loads a model: spade's
//! home, the default model, the compute device and threads, and the environment variables naming
//! them. The command-line options built on these are `crate::options` (the `cli` feature).

use std::path::PathBuf;

use candle_core::Device;

use crate::error::{Error, Result};

/// Environment variable naming the default model (a .gguf file or a model folder).
pub const MODEL_ENV: &str = "SPADE_MODEL";
/// Environment variable for the number of compute threads.
pub const THREADS_ENV: &str = "SPADE_THREADS";
/// The default model, relative to the repository root (fetched by `scripts/fetch-model.sh`).
pub const DEFAULT_MODEL_RELPATH: &str = "models/smollm2-135m-instruct/SmolLM2-135M-Instruct.Q4_1.gguf";

/// The default model's path: `$SPADE_MODEL`, else the fetched GGUF under `./models/`, else
/// under this source tree's repository root.
pub fn default_model_path() -> PathBuf {
    if let Ok(p) = std::env::var(MODEL_ENV) {
        if !p.is_empty() {
            return PathBuf::from(p);
        }
    }
    let local = PathBuf::from(DEFAULT_MODEL_RELPATH);
    if local.exists() {
        return local;
    }
    home().join(DEFAULT_MODEL_RELPATH)
}

/// The variable naming where spade's data lives.
pub const HOME_ENV: &str = "SPADE_HOME";

/// spade's home: the folder whose `data/` (prompts, seed environments), `models/` (the fetched
/// default model) and `.venv/` the stages fall back to when the current folder has none.
/// `$SPADE_HOME` when set; else the first folder above the running program that holds
/// `data/prompts` (a build in the repository, `<repo>/target/release/spade-design`), or holds it
/// under `share/spade` (an install, `<prefix>/bin/spade-design`: `make install` copies the data to
/// `<prefix>/share/spade`); else the current folder. Nothing of the build machine is compiled in.
pub fn home() -> PathBuf {
    if let Some(h) = std::env::var_os(HOME_ENV).filter(|h| !h.is_empty()) {
        return PathBuf::from(h);
    }
    if let Ok(exe) = std::env::current_exe() {
        for dir in exe.ancestors().skip(1) {
            if dir.join("data/prompts").is_dir() {
                return dir.to_path_buf();
            }
            let share = dir.join("share/spade");
            if share.join("data/prompts").is_dir() {
                return share;
            }
        }
    }
    PathBuf::from(".")
}

/// Parse `cpu` or `cuda:N` (`cuda` = `cuda:0`).
pub fn parse_device(s: &str) -> Result<Device> {
    let s = s.trim().to_ascii_lowercase();
    if s == "cpu" {
        return Ok(Device::Cpu);
    }
    let ord = match s.strip_prefix("cuda") {
        Some("") => 0,
        Some(rest) => {
            rest.strip_prefix(':').and_then(|n| n.parse::<usize>().ok()).ok_or_else(|| Error::Invalid(format!("bad device {s:?} (cpu | cuda:N)")))?
        }
        None => return Err(Error::Invalid(format!("bad device {s:?} (cpu | cuda:N)"))),
    };
    Device::new_cuda(ord).map_err(|e| Error::Invalid(format!("device cuda:{ord}: {e}")))
}

/// Set the number of compute threads. Must run before the first tensor operation (candle reads
/// `RAYON_NUM_THREADS` once for its pool).
pub fn set_threads(n: usize) {
    if n > 0 {
        // Edition 2021: set_var is safe; call it before other threads start.
        std::env::set_var("RAYON_NUM_THREADS", n.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_parse() {
        assert!(parse_device("cpu").unwrap().is_cpu());
        assert!(parse_device(" CPU ").unwrap().is_cpu());
        assert!(parse_device("gpu").is_err());
        assert!(parse_device("cuda:x").is_err());
    }
}
