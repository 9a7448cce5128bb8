//! Shared command-line model options (`--model`, `--device`, `--threads`, `--temperature`,
//! `--repr`) and the environment variables they read, named once here.

use std::path::PathBuf;

use candle_core::Device;

use crate::error::{Error, Result};
use crate::model::{Model, Repr};

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

/// Model options shared by every stage that loads a model (flatten into a command's args).
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct ModelArgs {
    /// Model: a .gguf file, a Hugging Face folder or a spade checkpoint folder
    /// [default: the fetched SmolLM2-135M-Instruct GGUF]
    #[arg(long, env = MODEL_ENV, value_name = "PATH")]
    pub model: Option<PathBuf>,
    /// Compute device: cpu or cuda:N (CUDA needs the `cuda` build feature)
    #[arg(long, default_value = "cpu", value_name = "DEVICE")]
    pub device: String,
    /// Compute threads (default: physical cores)
    #[arg(long, env = THREADS_ENV, value_name = "N")]
    pub threads: Option<usize>,
    /// Sampling temperature (0 = greedy); log-probs are recorded at this temperature
    #[arg(long, default_value_t = 1.0, value_name = "T")]
    pub temperature: f32,
    /// Weight representation for generation: f32 (log-probs equal the trainer's; fastest for
    /// batched generation) or q8_0 (faster single-stream decode, log-probs off by ~0.05)
    #[arg(long, default_value = "f32", value_name = "REPR")]
    pub repr: Repr,
    /// MiB of keys and values generation may hold: live sequences reserve their prompt and token
    /// budget (one that would exceed it waits for a slot), finished ones are kept for prompts that
    /// extend them (an episode's next turn, a group's shared prompt) until the space is needed
    #[arg(long, env = KV_BUDGET_ENV, default_value_t = DEFAULT_KV_BUDGET_MIB, value_name = "MIB")]
    pub kv_budget: usize,
}

/// Environment variable for `--kv-budget`.
pub const KV_BUDGET_ENV: &str = "SPADE_KV_BUDGET";
/// `--kv-budget`'s default, MiB.
pub const DEFAULT_KV_BUDGET_MIB: usize = crate::model::DEFAULT_KV_BUDGET >> 20;

impl Default for ModelArgs {
    fn default() -> Self {
        ModelArgs { model: None, device: "cpu".into(), threads: None, temperature: 1.0, repr: Repr::F32, kv_budget: DEFAULT_KV_BUDGET_MIB }
    }
}

impl ModelArgs {
    /// The model path these options name.
    pub fn model_path(&self) -> PathBuf {
        self.model.clone().unwrap_or_else(default_model_path)
    }

    pub fn device(&self) -> Result<Device> {
        parse_device(&self.device)
    }

    /// Record in a stage's configuration (a JSON object) what it sampled with: the resolved model
    /// path, the temperature and the weight representation.
    pub fn record_sampling(&self, config: &mut serde_json::Value) {
        if let Some(o) = config.as_object_mut() {
            o.insert("model".into(), self.model_path().display().to_string().into());
            o.insert("temperature".into(), self.temperature.into());
            o.insert("repr".into(), self.repr.to_string().into());
        }
    }

    /// Apply `--threads`, load the model for generation: its inference representation built,
    /// `--kv-budget` set and finished sequences' keys and values kept across calls (the weights
    /// do not change in a generating stage).
    pub fn load(&self) -> Result<Model> {
        if let Some(n) = self.threads {
            set_threads(n);
        }
        let device = self.device()?;
        let mut m = crate::load::load(&self.model_path(), &device)?;
        m.set_inference_repr(self.repr)?;
        m.set_kv_budget(self.kv_budget.saturating_mul(1 << 20));
        m.set_prefix_cache(true);
        Ok(m)
    }

    /// [`ModelArgs::load`], then generate through `--server` when it is given.
    pub fn load_with_server(&self, server: &crate::server::ServerArgs) -> Result<Model> {
        let mut m = self.load()?;
        server.attach(&mut m)?;
        Ok(m)
    }

    /// Load for training: f32 only, no inference copy.
    pub fn load_for_training(&self) -> Result<Model> {
        if let Some(n) = self.threads {
            set_threads(n);
        }
        crate::load::load(&self.model_path(), &self.device()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        model: ModelArgs,
    }

    #[test]
    fn flags_parse() {
        let c =
            Cli::try_parse_from(["x", "--model", "m.gguf", "--device", "cpu", "--threads", "2", "--temperature", "0.6", "--repr", "f32"]).unwrap();
        assert_eq!(c.model.model_path(), PathBuf::from("m.gguf"));
        assert_eq!((c.model.threads, c.model.temperature, c.model.repr), (Some(2), 0.6, Repr::F32));
        assert!(c.model.device().unwrap().is_cpu());
        let d = Cli::try_parse_from(["x"]).unwrap();
        assert_eq!(d.model.repr, Repr::F32);
        assert!(parse_device("gpu").is_err());
        assert!(parse_device("cuda:x").is_err());
    }

    #[test]
    fn tiny_folder_loads_through_the_options() {
        let dir = tempfile::tempdir().unwrap();
        crate::write_tiny_model(dir.path(), 3, crate::TinySpec::default()).unwrap();
        let args = ModelArgs { model: Some(dir.path().to_path_buf()), repr: Repr::Q8_0, ..Default::default() };
        let m = args.load().unwrap();
        assert_eq!(m.inference_repr(), Repr::Q8_0);
        assert_eq!(m.config().num_hidden_layers, 2);
        let bad = ModelArgs { model: Some(dir.path().join("missing.gguf")), ..Default::default() };
        assert!(bad.load().unwrap_err().to_string().contains("no such model"));
    }
}
