//! One GRPO step of `spade-grpo-step` from its samples to its checkpoint: the batch with each
//! role's advantages, the designer's share balanced against the agent's ([`DesignerScale`],
//! [`batch`]), then the update resumed from the start checkpoint — here ([`Trainer::step`]) or in
//! another program ([`ExternalStep`]) — and the next checkpoint written with its card
//! ([`GrpoStep::run`]).

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use serde::Serialize;
use spade_model::candle_core::Device;

use crate::advantage::{GroupStats, Norm};
use crate::card::{self, Card};
use crate::data::{assign_advantages, AdvantageConfig, Sample};
use crate::external::ExternalStep;
use crate::trainer::{StepConfig, Trainer, TrainerState};

/// The factor on the designer advantage: a fixed one, or the reference's automatic one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DesignerScale {
    /// min(agent samples / designer samples × interval, max): the reference's balance of the two
    /// roles' gradients (the designer has far fewer samples, trained once per interval agent steps).
    Auto,
    Fixed(f64),
}

impl Serialize for DesignerScale {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DesignerScale::Auto => s.serialize_str("auto"),
            DesignerScale::Fixed(x) => s.serialize_f64(*x),
        }
    }
}

/// `auto`, or a number ≥ 0.
impl std::str::FromStr for DesignerScale {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "auto" {
            return Ok(DesignerScale::Auto);
        }
        match s.parse::<f64>() {
            Ok(x) if x.is_finite() && x >= 0.0 => Ok(DesignerScale::Fixed(x)),
            _ => Err(format!("`{s}`: expected auto or a number ≥ 0")),
        }
    }
}

impl DesignerScale {
    /// The factor for a batch of `agent` and `designer` samples, the designer trained once per
    /// `interval` agent steps, [`DesignerScale::Auto`] capped at `max`.
    pub fn factor(self, agent: usize, designer: usize, interval: u32, max: f64) -> f64 {
        match self {
            DesignerScale::Fixed(x) => x,
            DesignerScale::Auto if agent == 0 || designer == 0 => 1.0,
            DesignerScale::Auto => (agent as f64 / designer as f64 * interval as f64).min(max),
        }
    }
}

/// How a step's rewards become advantages: each role's normalisation, the designer's scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Balance {
    pub agent_norm: Norm,
    pub designer_norm: Norm,
    pub designer_scale: DesignerScale,
    /// Agent steps per designer batch, and the cap, of [`DesignerScale::Auto`].
    pub designer_interval: u32,
    pub designer_scale_max: f64,
}

/// A step's batch: both roles' samples with their advantages (zero-variance groups dropped).
#[derive(Debug, Clone)]
pub struct Batch {
    pub samples: Vec<Sample>,
    pub agent_groups: GroupStats,
    pub designer_groups: GroupStats,
    /// The factor the designer's advantages were scaled by.
    pub designer_scale: f64,
}

/// The batch of `agent` and `designer` samples ([`assign_advantages`]), the designer's scale
/// resolved for their numbers.
pub fn batch(agent: Vec<Sample>, designer: Vec<Sample>, b: &Balance) -> Batch {
    let designer_scale = b.designer_scale.factor(agent.len(), designer.len(), b.designer_interval, b.designer_scale_max);
    let cfg = AdvantageConfig { agent_norm: b.agent_norm, designer_norm: b.designer_norm, designer_scale };
    let mut all = agent;
    all.extend(designer);
    let (samples, agent_groups, designer_groups) = assign_advantages(all, &cfg);
    Batch { samples, agent_groups, designer_groups, designer_scale }
}

/// Where a step's update runs.
#[derive(Debug, Clone, Copy)]
pub enum Update<'a> {
    /// In this process, on this device.
    Here(&'a Device),
    /// In another program ([`ExternalStep`]): its shell command, the thread count and the
    /// `--device` it is told (`cuda…` means CUDA, anything else the CPU).
    External { command: &'a str, threads: Option<usize>, device: &'a str },
}

/// One step from the start checkpoint `model` (resumed: its weights, optimizer moments and
/// trainer state `start`, [`TrainerState::read`]) to the checkpoint folder `output`.
pub struct GrpoStep<'a> {
    pub model: &'a Path,
    pub start: &'a TrainerState,
    /// The KL reference; by default the run's initial model (`start.initial_model`).
    pub reference: Option<&'a Path>,
    pub cfg: &'a StepConfig,
    pub output: &'a Path,
    /// For the checkpoint's card: the self-play round, the input tables, the stage's configuration.
    pub round: u64,
    pub data: Vec<(&'a str, String)>,
    pub config: &'a serde_json::Value,
    /// The step's diagnostics ([`crate::trainer::Diagnostics`], and the KL to the reference even
    /// at coefficient 0); spade's own trainer only.
    pub diagnose: bool,
}

/// What a step reports.
#[derive(Debug, Clone)]
pub struct Written {
    /// The step's metrics ([`crate::StepMetrics`] as JSON, or the external trainer's), `step` set.
    pub metrics: serde_json::Value,
    /// Seconds spent writing the checkpoint (with an external trainer: all but its update's own time).
    pub save_s: f64,
}

impl GrpoStep<'_> {
    /// The KL reference, resolved.
    pub fn reference(&self) -> PathBuf {
        self.reference.map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from(&self.start.initial_model))
    }

    /// Trains on `samples` (advantages set) and writes the next checkpoint atomically, with its
    /// card. With no sample the weights stay and only the step advances.
    pub fn run(&self, samples: &[Sample], update: Update) -> anyhow::Result<Written> {
        let ref_path = self.reference();
        let model = self.model.display().to_string();
        let card = |metrics: &serde_json::Value| {
            card::render(&Card {
                stage: "spade-grpo-step",
                model: &model,
                initial_model: &self.start.initial_model,
                base: &self.start.initial_model,
                round: self.round,
                step: metrics["step"].as_i64().unwrap_or(self.start.step + 1),
                data: self.data.clone(),
                metrics: metrics.clone(),
                config: self.config.clone(),
            })
        };
        match update {
            Update::External { command, threads, device } => {
                anyhow::ensure!(!self.diagnose, "--diagnostics needs spade's own trainer (not --trainer)");
                let device = if device.starts_with("cuda") { "cuda" } else { "cpu" };
                let ext = ExternalStep { command, model: self.model, start: self.start, reference: Some(&ref_path), threads, device };
                let t = Instant::now();
                let metrics = ext.run(samples, self.cfg, self.output, card)?;
                let save_s = t.elapsed().as_secs_f64() - metrics["time"]["total"].as_f64().unwrap_or(0.0);
                Ok(Written { metrics, save_s })
            }
            Update::Here(device) => {
                let mut trainer = Trainer::open(self.model, device).with_context(|| format!("--model {}", self.model.display()))?;
                let reference = if (self.cfg.objective.kl_coef != 0.0 || self.diagnose) && !samples.is_empty() {
                    Some(spade_model::load(&ref_path, device).with_context(|| format!("KL reference {}", ref_path.display()))?)
                } else {
                    None
                };
                let metrics = serde_json::to_value(trainer.step_diagnosed(samples, self.cfg, reference.as_ref(), self.diagnose)?)?;
                let t = Instant::now();
                trainer.save(self.output, Some(&card(&metrics)))?;
                Ok(Written { metrics, save_s: t.elapsed().as_secs_f64() })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_designer_scale_parses_and_balances_the_roles() {
        assert_eq!("auto".parse::<DesignerScale>(), Ok(DesignerScale::Auto));
        assert_eq!("2.5".parse::<DesignerScale>(), Ok(DesignerScale::Fixed(2.5)));
        assert!("-1".parse::<DesignerScale>().is_err() && "inf".parse::<DesignerScale>().is_err() && "big".parse::<DesignerScale>().is_err());
        assert_eq!(DesignerScale::Fixed(3.0).factor(7, 5, 2, 1.0), 3.0);
        assert!((DesignerScale::Auto.factor(7, 5, 2, 50.0) - 2.8).abs() < 1e-12);
        assert_eq!(DesignerScale::Auto.factor(7, 5, 1, 1.0), 1.0, "capped");
        assert_eq!(DesignerScale::Auto.factor(0, 5, 1, 50.0), 1.0, "one role alone");
        assert_eq!(serde_json::to_value(DesignerScale::Auto).unwrap(), "auto");
        assert_eq!(serde_json::to_value(DesignerScale::Fixed(1.0)).unwrap(), 1.0);
    }
}
