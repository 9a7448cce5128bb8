//! The designer warm-up's training (`spade-sft`): supervised fine-tuning on (prompt, target)
//! sequences — epochs in a seeded order, batches of supervised steps ([`StepConfig::supervised`]:
//! the negative log-likelihood of the target tokens) under a learning-rate schedule, the held-out
//! loss before training and after every epoch — and the fresh start of its checkpoint for
//! self-play ([`restart`]). The sequences themselves are `spade_design::warmup`'s.

use indicatif::ProgressBar;

use crate::data::{Role, Sample};
use crate::optim::{self, AdamW, Schedule};
use crate::trainer::{mean_nll, LossAgg, StepConfig, Trainer};

/// A supervised sequence (tokens, and 1 on the target's tokens) as a trainer sample: the
/// designer's role, the advantage and behaviour log-probs unused.
pub fn sample(tokens: Vec<u32>, mask: Vec<u8>) -> Sample {
    let n = tokens.len();
    Sample {
        role: Role::Designer,
        tokens,
        mask,
        behaviour: vec![0.0; n],
        temperature: 1.0,
        reward: 0.0,
        group: String::new(),
        advantage: 0.0,
        policy_version: None,
    }
}

/// The warm-up's hyperparameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SftConfig {
    /// Passes over the training samples.
    pub epochs: usize,
    /// Samples per optimizer update (≥ 1).
    pub batch: usize,
    /// Sequences per forward/backward (≥ 1).
    pub micro_batch: usize,
    /// AdamW's peak learning rate, its schedule over all updates, and the fraction of the updates
    /// that warm it up from 0.
    pub lr: f64,
    pub lr_schedule: Schedule,
    pub warmup: f64,
    pub weight_decay: f64,
    /// Gradient clipping by global norm (0: off).
    pub max_grad_norm: f64,
    /// MiB of block activations a forward may keep for its backward ([`StepConfig::keep_activations_mib`]).
    pub keep_activations_mib: usize,
}

impl SftConfig {
    /// The step configuration of every update (its learning rate set per update by the schedule).
    fn step_config(&self) -> StepConfig {
        StepConfig {
            adamw: AdamW { lr: self.lr, weight_decay: self.weight_decay, max_grad_norm: self.max_grad_norm, ..AdamW::default() },
            loss_agg: LossAgg::TokenMean,
            micro_batch: self.micro_batch,
            supervised: true,
            keep_activations_mib: self.keep_activations_mib,
            ..StepConfig::default()
        }
    }
}

/// What a warm-up reports.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SftReport {
    /// Training loss per target token of each epoch.
    pub epoch_loss: Vec<f64>,
    /// Held-out loss per target token before training, after each epoch, and at the end.
    pub held_out_before: f64,
    pub held_out_by_epoch: Vec<f64>,
    pub held_out_after: f64,
    /// Target tokens of the held-out samples.
    pub held_out_tokens: usize,
}

/// Trains `trainer` on `train` for `cfg.epochs` epochs, each in the order `order(epoch)` (a
/// permutation of the samples' indices), `cfg.batch` samples an update; scores `held` (never
/// trained on) before and after every epoch. `progress(updates)` makes the bar the updates
/// advance, once the held-out loss before training is known.
pub fn train(
    trainer: &mut Trainer,
    train: &[Sample],
    held: &[Sample],
    cfg: &SftConfig,
    order: impl Fn(usize) -> Vec<usize>,
    progress: impl FnOnce(u64) -> ProgressBar,
) -> anyhow::Result<SftReport> {
    let (held_out_before, held_out_tokens) = mean_nll(&trainer.model, held, cfg.micro_batch)?;
    let mut step = cfg.step_config();
    let updates_per_epoch = train.len().div_ceil(cfg.batch);
    let total_updates = updates_per_epoch * cfg.epochs;
    let warmup_updates = (cfg.warmup * total_updates as f64).round() as usize;
    let pb = progress(total_updates as u64);
    let (mut epoch_loss, mut held_out_by_epoch) = (Vec::new(), Vec::new());
    for epoch in 0..cfg.epochs {
        let (mut loss, mut n) = (0.0, 0usize);
        for (u, chunk) in order(epoch).chunks(cfg.batch).enumerate() {
            let batch: Vec<Sample> = chunk.iter().map(|&i| train[i].clone()).collect();
            step.adamw.lr = cfg.lr_schedule.lr(cfg.lr, epoch * updates_per_epoch + u, total_updates, warmup_updates);
            let m = trainer.step(&batch, &step, None)?;
            loss += m.loss * m.designer.tokens as f64;
            n += m.designer.tokens;
            pb.inc(1);
        }
        let mean = if n == 0 { 0.0 } else { loss / n as f64 };
        epoch_loss.push(mean);
        // The held-out loss after every epoch (a few forward passes), to see where overfitting starts.
        let (h, _) = mean_nll(&trainer.model, held, cfg.micro_batch)?;
        pb.suspend(|| tracing::info!("epoch {}: training loss {mean:.4} per token, held-out {h:.4}", epoch + 1));
        held_out_by_epoch.push(h);
    }
    pb.finish_and_clear();
    let held_out_after = held_out_by_epoch.last().copied().unwrap_or(held_out_before);
    tracing::info!("held-out loss per token: {held_out_before:.4} before, {held_out_after:.4} after ({held_out_tokens} tokens)");
    Ok(SftReport { epoch_loss, held_out_before, held_out_by_epoch, held_out_after, held_out_tokens })
}

/// Makes the trainer's checkpoint start self-play afresh: step 0, no optimizer moments, and
/// `initial_model` (the checkpoint's own path) as the KL reference. Returns the updates the
/// warm-up made.
pub fn restart(trainer: &mut Trainer, initial_model: String) -> i64 {
    let updates = trainer.state.step;
    trainer.opt = optim::State::zeros(trainer.model.weights().named_vars());
    trainer.state.step = 0;
    trainer.state.optimizer_steps = 0;
    trainer.state.initial_model = initial_model;
    updates
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_supervised_sample_trains_its_target_tokens_as_the_designer() {
        let s = sample(vec![1, 2, 3, 4], vec![0, 0, 1, 1]);
        assert_eq!((s.role, s.trained_tokens(), s.behaviour.len(), s.temperature), (Role::Designer, 2, 4, 1.0));
        let cfg = SftConfig {
            epochs: 1,
            batch: 4,
            micro_batch: 2,
            lr: 1e-3,
            lr_schedule: Schedule::Cosine,
            warmup: 0.1,
            weight_decay: 0.0,
            max_grad_norm: 1.0,
            keep_activations_mib: 64,
        };
        let step = cfg.step_config();
        assert!(step.supervised && step.loss_agg == LossAgg::TokenMean && step.micro_batch == 2 && step.adamw.lr == 1e-3);
    }
}
