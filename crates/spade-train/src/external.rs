//! A GRPO step whose update runs in another program (`spade-grpo-step --trainer CMD`), e.g. the
//! FSDP trainer `scripts/grpo_step_fsdp.py` under `torchrun` or `srun torchrun`.
//!
//! spade keeps the data half of the step — the tables read, the advantages, the micro- and
//! mini-batches ([`StepPlan`]), the trainer state, the model card, the atomic checkpoint — so both
//! trainers train on exactly the same batch, and hands the program a plan file (JSON):
//!
//! ```text
//! {"format": 1, "model": FOLDER, "reference": FOLDER|null, "output": DIR, "metrics": FILE,
//!  "threads": N|null, "device": "cpu"|"cuda", "state": TrainerState, "config": StepConfig,
//!  "samples": [{"role", "tokens", "mask", "behaviour", "temperature", "advantage"}],
//!  "mini_batches": [[[i, ...], ...], ...], "weights": [w_i, ...]}
//! ```
//!
//! `model` (and `reference`) are Hugging Face folders (a `.gguf` is written out as one first). The
//! program writes into `output` the updated `model.safetensors` (Hugging Face names, float32), the
//! AdamW moments as `optimizer.safetensors` (`exp_avg.NAME`, `exp_avg_sq.NAME`) and the model's other
//! files (config, tokenizer), and the step's metrics (the fields of [`crate::StepMetrics`]) as JSON
//! into `metrics`; spade then writes `trainer_state.json` and the card and renames the folder into place.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};
use serde::Serialize;

use crate::data::Sample;
use crate::trainer::{install_folder, temp_sibling, StepConfig, StepPlan, TrainerState};

/// The plan file's sample: what the update reads of a [`Sample`].
#[derive(Serialize)]
struct PlanSample<'a> {
    role: crate::Role,
    tokens: &'a [u32],
    mask: &'a [u8],
    behaviour: &'a [f32],
    temperature: f32,
    advantage: f64,
}

/// What the external step needs besides the samples.
pub struct ExternalStep<'a> {
    /// The shell command (run with `sh -c`, the plan file's path appended as `--plan FILE`).
    pub command: &'a str,
    /// The start model (`--model`) and its trainer state ([`TrainerState::read`]).
    pub model: &'a Path,
    pub start: &'a TrainerState,
    /// The KL reference (resolved), when the step has a KL term.
    pub reference: Option<&'a Path>,
    pub threads: Option<usize>,
    pub device: &'a str,
}

/// A Hugging Face folder for `path`: itself when it is one, else (a `.gguf`) written under `work`.
fn as_folder(path: &Path, work: &Path, name: &str) -> anyhow::Result<PathBuf> {
    if path.is_dir() {
        return Ok(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()));
    }
    let model = spade_model::load(path, &spade_model::candle_core::Device::Cpu).with_context(|| format!("{}", path.display()))?;
    let dir = work.join(name);
    spade_model::checkpoint::save_hf_folder(&model, &dir)?;
    Ok(dir)
}

impl ExternalStep<'_> {
    /// Run the step: the program updates the weights into a temporary sibling of `output`, spade
    /// adds the trainer state and `card` and renames it into place. Returns the program's metrics
    /// (with `step` set).
    pub fn run(
        &self,
        samples: &[Sample],
        cfg: &StepConfig,
        output: &Path,
        card: impl FnOnce(&serde_json::Value) -> String,
    ) -> anyhow::Result<serde_json::Value> {
        let start = self.start;
        let tmp = temp_sibling(output)?;
        let work = tmp.with_extension("work");
        let result = (|| -> anyhow::Result<serde_json::Value> {
            std::fs::create_dir_all(&work).with_context(|| format!("{}: cannot create", work.display()))?;
            std::fs::create_dir_all(&tmp).with_context(|| format!("{}: cannot create", tmp.display()))?;
            let model = as_folder(self.model, &work, "model")?;
            let reference = match self.reference {
                Some(r) if cfg.objective.kl_coef != 0.0 && !samples.is_empty() => Some(as_folder(r, &work, "reference")?),
                _ => None,
            };
            let plan = StepPlan::new(samples, cfg);
            let metrics_path = work.join("metrics.json");
            let plan_json = serde_json::json!({
                "format": 1,
                "model": model,
                "reference": reference,
                "output": std::fs::canonicalize(&tmp).unwrap_or_else(|_| tmp.clone()),
                "metrics": metrics_path,
                "threads": self.threads,
                "device": self.device,
                "state": start,
                "config": cfg,
                "samples": samples.iter().map(|s| PlanSample {
                    role: s.role, tokens: &s.tokens, mask: &s.mask, behaviour: &s.behaviour, temperature: s.temperature, advantage: s.advantage,
                }).collect::<Vec<_>>(),
                "mini_batches": plan.mini_batches,
                "weights": plan.weights,
            });
            let plan_path = work.join("plan.json");
            std::fs::write(&plan_path, serde_json::to_vec(&plan_json)?).with_context(|| format!("{}: cannot write", plan_path.display()))?;
            tracing::info!("trainer: {} --plan {}", self.command, plan_path.display());
            // The program's standard output is log, not data: it goes to our standard error.
            let status = Command::new("sh")
                .arg("-c")
                .arg(format!("{} --plan \"$1\" 1>&2", self.command))
                .arg("sh")
                .arg(&plan_path)
                .status()
                .with_context(|| format!("--trainer `{}`: cannot start sh", self.command))?;
            if !status.success() {
                bail!("--trainer `{}` failed ({status}); the input checkpoint is unchanged", self.command);
            }
            let text = std::fs::read_to_string(&metrics_path)
                .with_context(|| format!("--trainer `{}` wrote no metrics ({})", self.command, metrics_path.display()))?;
            let mut metrics: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("{}: invalid JSON", metrics_path.display()))?;
            for f in [spade_model::checkpoint::WEIGHTS_FILE, spade_model::checkpoint::OPTIMIZER_FILE, spade_model::checkpoint::CONFIG_FILE] {
                anyhow::ensure!(tmp.join(f).exists(), "--trainer `{}` did not write {f}", self.command);
            }
            let optimizer_steps =
                metrics["optimizer_steps"].as_u64().with_context(|| format!("{}: `optimizer_steps` missing", metrics_path.display()))?;
            let state = TrainerState {
                format: 1,
                step: start.step + 1,
                initial_model: start.initial_model.clone(),
                optimizer_steps,
                rng: None,
                last_config: serde_json::to_value(cfg).ok(),
            };
            metrics["step"] = state.step.into();
            let ck = spade_model::Checkpoint::new(&tmp);
            state.write(&ck)?;
            ck.write_file("README.md", card(&metrics).as_bytes())?;
            Ok(metrics)
        })();
        let _ = std::fs::remove_dir_all(&work);
        match result {
            Ok(r) => {
                install_folder(&tmp, output)?;
                Ok(r)
            }
            Err(e) => {
                let _ = std::fs::remove_dir_all(&tmp);
                Err(e)
            }
        }
    }
}
