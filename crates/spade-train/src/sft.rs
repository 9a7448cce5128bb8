//! The designer warm-up's training (`spade-sft`): supervised fine-tuning on (prompt, target)
//! sequences — epochs in a seeded order, batches of supervised steps ([`StepConfig::supervised`]:
//! the negative log-likelihood of the target tokens) under a learning-rate schedule, the held-out
//! loss before training and after every epoch — and the fresh start of its checkpoint for
//! self-play ([`restart`]). A warm-up reports each update to a callback (which may save the
//! trainer with its [`SftProgress`], or stop), and continues exactly from such a save. The
//! sequences themselves are `spade_design::warmup`'s.

use std::ops::ControlFlow;
use std::time::Instant;

use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

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
    /// Seconds of training and held-out scoring, over all runs of a continued warm-up.
    pub seconds: f64,
}

/// Where a warm-up stands after an update: all a continued run needs besides the trainer's own
/// checkpoint (weights, optimizer moments, step).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SftProgress {
    /// Updates applied so far (over all epochs).
    pub updates_done: usize,
    /// Held-out loss per target token before training, and the held-out target tokens.
    pub held_out_before: f64,
    pub held_out_tokens: usize,
    /// Training loss per token and held-out loss of each finished epoch.
    pub epoch_loss: Vec<f64>,
    pub held_out_by_epoch: Vec<f64>,
    /// The unfinished epoch's summed training loss and its target tokens.
    pub loss_sum: f64,
    pub tokens: usize,
    /// Seconds spent in updates (and held-out scoring) so far, over all runs.
    pub seconds: f64,
}

/// One update, as the callback of [`train`] sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UpdateInfo {
    /// 1-based, over all epochs, and the total.
    pub update: usize,
    pub updates: usize,
    /// 1-based epoch of the update; whether it finished the epoch (the held-out loss is then in
    /// the progress).
    pub epoch: usize,
    pub epoch_end: bool,
    /// Training loss per target token of this update, its learning rate and target tokens.
    pub loss: f64,
    pub lr: f64,
    pub tokens: usize,
    /// Seconds of this update (its held-out scoring included at an epoch's end).
    pub seconds: f64,
}

/// Trains `trainer` on `train` for `cfg.epochs` epochs, each in the order `order(epoch)` (a
/// permutation of the samples' indices), `cfg.batch` samples an update; scores `held` (never
/// trained on) before and after every epoch. `progress(updates)` makes the bar the updates
/// advance, once the held-out loss before training is known. `resume`, the progress saved with
/// the trainer's checkpoint, skips the updates already applied (the schedule and order are
/// functions of the update's index, so the continued run makes the same updates). After every
/// update `on_update` sees the trainer, the progress and the update; `ControlFlow::Break` stops
/// the warm-up there (the report is then `None`).
#[allow(clippy::too_many_arguments)]
pub fn train(
    trainer: &mut Trainer,
    train: &[Sample],
    held: &[Sample],
    cfg: &SftConfig,
    order: impl Fn(usize) -> Vec<usize>,
    resume: Option<SftProgress>,
    progress: impl FnOnce(u64) -> ProgressBar,
    mut on_update: impl FnMut(&Trainer, &SftProgress, &UpdateInfo) -> anyhow::Result<ControlFlow<()>>,
) -> anyhow::Result<Option<SftReport>> {
    let mut p = match resume {
        Some(p) => p,
        None => {
            let t = Instant::now();
            let (held_out_before, held_out_tokens) = mean_nll(&trainer.model, held, cfg.micro_batch)?;
            SftProgress { held_out_before, held_out_tokens, seconds: t.elapsed().as_secs_f64(), ..SftProgress::default() }
        }
    };
    anyhow::ensure!(!train.is_empty() && cfg.batch > 0, "nothing to train on");
    let mut step = cfg.step_config();
    let updates_per_epoch = train.len().div_ceil(cfg.batch);
    let total_updates = updates_per_epoch * cfg.epochs;
    anyhow::ensure!(p.updates_done <= total_updates, "the saved progress has {} updates of {total_updates}", p.updates_done);
    let warmup_updates = (cfg.warmup * total_updates as f64).round() as usize;
    let pb = progress(total_updates as u64);
    pb.set_position(p.updates_done as u64);
    for epoch in p.updates_done / updates_per_epoch..cfg.epochs {
        for (u, chunk) in order(epoch).chunks(cfg.batch).enumerate() {
            let index = epoch * updates_per_epoch + u;
            if index < p.updates_done {
                continue;
            }
            let t = Instant::now();
            let batch: Vec<Sample> = chunk.iter().map(|&i| train[i].clone()).collect();
            step.adamw.lr = cfg.lr_schedule.lr(cfg.lr, index, total_updates, warmup_updates);
            let m = trainer.step(&batch, &step, None)?;
            p.loss_sum += m.loss * m.designer.tokens as f64;
            p.tokens += m.designer.tokens;
            p.updates_done = index + 1;
            let epoch_end = u + 1 == updates_per_epoch;
            if epoch_end {
                let mean = if p.tokens == 0 { 0.0 } else { p.loss_sum / p.tokens as f64 };
                // The held-out loss after every epoch (a few forward passes), to see where overfitting starts.
                let (h, _) = mean_nll(&trainer.model, held, cfg.micro_batch)?;
                pb.suspend(|| tracing::info!("epoch {}: training loss {mean:.4} per token, held-out {h:.4}", epoch + 1));
                p.epoch_loss.push(mean);
                p.held_out_by_epoch.push(h);
                (p.loss_sum, p.tokens) = (0.0, 0);
            }
            let seconds = t.elapsed().as_secs_f64();
            p.seconds += seconds;
            pb.inc(1);
            let info = UpdateInfo {
                update: index + 1,
                updates: total_updates,
                epoch: epoch + 1,
                epoch_end,
                loss: m.loss,
                lr: step.adamw.lr,
                tokens: m.designer.tokens,
                seconds,
            };
            if pb.suspend(|| on_update(trainer, &p, &info))?.is_break() {
                pb.finish_and_clear();
                return Ok(None);
            }
        }
    }
    pb.finish_and_clear();
    let held_out_after = p.held_out_by_epoch.last().copied().unwrap_or(p.held_out_before);
    tracing::info!("held-out loss per token: {:.4} before, {held_out_after:.4} after ({} tokens)", p.held_out_before, p.held_out_tokens);
    Ok(Some(SftReport {
        epoch_loss: p.epoch_loss,
        held_out_before: p.held_out_before,
        held_out_by_epoch: p.held_out_by_epoch,
        held_out_after,
        held_out_tokens: p.held_out_tokens,
        seconds: p.seconds,
    }))
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
