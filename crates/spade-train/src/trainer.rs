//! The trainer: a model with its optimizer state and trainer state; one GRPO step over a batch of
//! samples (micro-batches with gradient accumulation, optional PPO-style mini-batches), and
//! checkpoints written atomically that resume bit-identically.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};
use spade_model::candle_core::{Device, Tensor};
use spade_model::{Checkpoint, Model};

use crate::data::{Role, Sample};
use crate::objective::{Objective, TokenTerms};
use crate::optim::{self, AdamW};

/// How per-token losses are aggregated into the step's loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LossAgg {
    /// Each sequence's token mean, averaged over sequences (the reference: slime without
    /// `--calculate-per-token-loss`).
    SeqMeanTokenMean,
    /// Mean over every trained token of the batch.
    TokenMean,
    /// Dr. GRPO: each sequence's token sum divided by a constant (the longest trained span of the
    /// step), averaged over sequences.
    DrGrpo,
}

impl std::str::FromStr for LossAgg {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "seq-mean-token-mean" => Ok(LossAgg::SeqMeanTokenMean),
            "token-mean" => Ok(LossAgg::TokenMean),
            "dr-grpo" => Ok(LossAgg::DrGrpo),
            _ => Err(format!("unknown loss aggregation {s:?} (seq-mean-token-mean | token-mean | dr-grpo)")),
        }
    }
}

impl TrainerState {
    /// Write the state into the checkpoint folder `ck` (`trainer_state.json`, atomically).
    pub fn write(&self, ck: &Checkpoint) -> anyhow::Result<()> {
        ck.write_file(spade_model::checkpoint::TRAINER_STATE_FILE, (serde_json::to_string_pretty(self)? + "\n").as_bytes())?;
        Ok(())
    }

    /// The trainer state of `--model`: a spade checkpoint's `trainer_state.json`, else a fresh state
    /// (step 0) whose initial model is the model itself.
    pub fn read(path: &Path) -> anyhow::Result<TrainerState> {
        let state_path = Checkpoint::new(path).trainer_state_path();
        if path.is_dir() && state_path.exists() {
            let text = std::fs::read_to_string(&state_path).with_context(|| format!("{}: cannot read", state_path.display()))?;
            return serde_json::from_str::<TrainerState>(&text).with_context(|| format!("{}: invalid trainer state", state_path.display()));
        }
        let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        Ok(TrainerState { format: 1, step: 0, initial_model: abs.display().to_string(), optimizer_steps: 0, rng: None, last_config: None })
    }
}

/// How a step's samples are split: mini-batches (one optimizer update each) of micro-batches
/// (one forward/backward each; indices into the samples), and each sample's aggregation weight
/// (the weight of each of its trained tokens in the loss). What [`Trainer::step`] does, for a
/// trainer in another program (`spade-grpo-step --trainer`).
#[derive(Debug, Clone, Serialize)]
pub struct StepPlan {
    pub mini_batches: Vec<Vec<Vec<usize>>>,
    pub weights: Vec<f64>,
}

impl StepPlan {
    pub fn new(samples: &[Sample], cfg: &StepConfig) -> StepPlan {
        let nmb = cfg.mini_batches.max(1).min(samples.len().max(1));
        let dr = dr_norm(samples);
        let mut weights = vec![0.0; samples.len()];
        let mut mini_batches = Vec::new();
        for idx in mini_batch_indices(samples.len(), nmb) {
            let part: Vec<&Sample> = idx.iter().map(|&i| &samples[i]).collect();
            for (j, w) in sample_weights(&part, cfg.loss_agg, dr).into_iter().enumerate() {
                weights[idx[j]] = w;
            }
            mini_batches.push(micro_batches(&part, cfg.micro_batch.max(1)).into_iter().map(|mb| mb.into_iter().map(|j| idx[j]).collect()).collect());
        }
        StepPlan { mini_batches, weights }
    }
}

/// The sample indices of each of `nmb` mini-batches (sample i in mini-batch i mod nmb); empty ones left out.
fn mini_batch_indices(n: usize, nmb: usize) -> Vec<Vec<usize>> {
    (0..nmb).map(|k| (0..n).filter(|i| i % nmb == k).collect::<Vec<_>>()).filter(|v| !v.is_empty()).collect()
}

/// Install the folder `tmp` as `dir`: renamed into place, an existing `dir` replaced.
pub fn install_folder(tmp: &Path, dir: &Path) -> anyhow::Result<()> {
    let (parent, name) = folder_parts(dir)?;
    if dir.exists() {
        let old = parent.join(format!(".{name}.old.{}", std::process::id()));
        std::fs::rename(dir, &old).with_context(|| format!("{}: cannot replace", dir.display()))?;
        std::fs::rename(tmp, dir).with_context(|| format!("{}: cannot rename into place", dir.display()))?;
        std::fs::remove_dir_all(&old).with_context(|| format!("{}: cannot remove", old.display()))?;
    } else {
        std::fs::rename(tmp, dir).with_context(|| format!("{}: cannot rename into place", dir.display()))?;
    }
    Ok(())
}

/// A checkpoint folder's parent (created) and name, and its fresh temporary sibling `.NAME.tmp.PID`
/// (the siblings a killed writer left, `.NAME.tmp.PID` and `.NAME.old.PID`, removed).
pub fn temp_sibling(dir: &Path) -> anyhow::Result<PathBuf> {
    let (parent, name) = folder_parts(dir)?;
    std::fs::create_dir_all(&parent).with_context(|| format!("{}: cannot create folder", parent.display()))?;
    spade_schema::temps::remove_dead_temps(&parent, &name);
    let tmp = parent.join(format!(".{name}.tmp.{}", std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).with_context(|| format!("{}: cannot remove", tmp.display()))?;
    }
    Ok(tmp)
}

fn folder_parts(dir: &Path) -> anyhow::Result<(PathBuf, String)> {
    let name = dir.file_name().and_then(|n| n.to_str()).ok_or_else(|| anyhow::anyhow!("{}: not a folder name", dir.display()))?;
    let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    Ok((parent, name.to_string()))
}

/// Everything one step needs besides the data.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepConfig {
    pub objective: Objective,
    pub adamw: AdamW,
    pub loss_agg: LossAgg,
    /// Sequences per forward/backward (memory is bounded by it).
    pub micro_batch: usize,
    /// Optimizer updates per step, each over 1/N of the samples (1: the reference).
    pub mini_batches: usize,
    /// The blockwise backward (see `spade_model::Checkpointed`): one block at a time, from kept
    /// activations or recomputed ones. Off: candle's autograd over the whole graph (a reference).
    #[serde(default = "yes")]
    pub checkpointing: bool,
    /// With `checkpointing`: MiB of block activations a micro-batch's forward may keep, so their
    /// backward skips the recomputation (the first blocks that fit; 0 recomputes every block).
    #[serde(default = "keep_mib")]
    pub keep_activations_mib: usize,
    /// Supervised fine-tuning instead of GRPO: the loss is the negative log-likelihood of the
    /// masked tokens (advantages, ratios, TIS and KL unused) — the designer warm-up.
    #[serde(default)]
    pub supervised: bool,
    /// With `checkpointing`: samples of one role and temperature whose prompts (the tokens before
    /// the first trained one) begin alike go through the model as one packed row, the common
    /// prefix once (`spade_model::Model::token_logprobs_shared_prefix`), where that
    /// costs fewer operations than one by one. Gradients equal to float rounding.
    #[serde(default = "yes")]
    pub share_prompts: bool,
}

fn yes() -> bool {
    true
}

/// Default of [`StepConfig::keep_activations_mib`]: all 30 blocks of the default model at
/// micro-batch 1 × ~2,500 tokens (~27 KiB a token a block; the attention probabilities are
/// recomputed in the backward, not kept) — a designer sample of a round trains without
/// recomputing a block.
pub const KEEP_ACTIVATIONS_MIB: usize = 2048;

fn keep_mib() -> usize {
    KEEP_ACTIVATIONS_MIB
}

impl Default for StepConfig {
    fn default() -> Self {
        StepConfig {
            objective: Objective::default(),
            adamw: AdamW::default(),
            loss_agg: LossAgg::SeqMeanTokenMean,
            micro_batch: 1,
            mini_batches: 1,
            checkpointing: true,
            keep_activations_mib: KEEP_ACTIVATIONS_MIB,
            supervised: false,
            share_prompts: true,
        }
    }
}

/// `trainer_state.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrainerState {
    /// Layout version of this file.
    pub format: u32,
    /// Steps taken: the policy version of the weights in the folder.
    pub step: i64,
    /// The run's initial model (the default KL reference).
    pub initial_model: String,
    /// AdamW updates applied (bias correction); a step with nothing to train adds none.
    pub optimizer_steps: u64,
    /// The trainer draws no random numbers (no dropout, no sampling; micro-batch order is fixed by
    /// the input), so exact resume needs no RNG state; recorded for readers who look for it.
    pub rng: Option<String>,
    /// The configuration of the last step, for the record.
    #[serde(default)]
    pub last_config: Option<serde_json::Value>,
}

/// The trainer.
pub struct Trainer {
    pub model: Model,
    pub opt: optim::State,
    pub state: TrainerState,
}

/// Per-role sums of a step.
#[derive(Debug, Clone, Default, Serialize)]
pub struct RoleMetrics {
    pub samples: usize,
    pub tokens: usize,
    /// This role's share of the loss (the roles' losses add up to the total).
    pub loss: f64,
    pub clip_frac: f64,
    pub tis_mean: f64,
    pub tis_min: f64,
    pub tis_max: f64,
    pub tis_capped_frac: f64,
    /// Mean k3 over trained tokens (0 without KL).
    pub kl: f64,
    pub adv_mean_abs: f64,
    /// Mean negative log-prob of the trained tokens under the weights at the start of the step:
    /// the sampled-token estimate of the policy's entropy at the sampling temperature.
    pub entropy: f64,
    /// Mean and max over trained tokens of the clipped objective's ratio exp(logπ − logπ_old)
    /// (1 with one mini-batch: every token is scored at the start weights).
    pub ratio_mean: f64,
    pub ratio_max: f64,
    /// Norm of this role's part of the gradient before clipping (mean over mini-batches). The
    /// designer's micro-batches run first, so its part is measured exactly without a second
    /// buffer; the agent's is known only when it trains alone (0 otherwise).
    pub grad_norm: f64,
    #[serde(skip)]
    n_clipped: usize,
    #[serde(skip)]
    n_capped: usize,
    #[serde(skip)]
    tis_sum: f64,
    #[serde(skip)]
    kl_sum: f64,
    #[serde(skip)]
    adv_abs_sum: f64,
    #[serde(skip)]
    nll_sum: f64,
    #[serde(skip)]
    ratio_sum: f64,
}

impl RoleMetrics {
    fn finish(&mut self) {
        let n = self.tokens.max(1) as f64;
        self.clip_frac = self.n_clipped as f64 / n;
        self.tis_capped_frac = self.n_capped as f64 / n;
        self.tis_mean = self.tis_sum / n;
        self.kl = self.kl_sum / n;
        self.adv_mean_abs = self.adv_abs_sum / self.samples.max(1) as f64;
        self.entropy = self.nll_sum / n;
        self.ratio_mean = self.ratio_sum / n;
        if self.tokens == 0 {
            self.tis_min = 0.0;
            self.tis_max = 0.0;
        }
    }
}

/// Seconds spent per phase.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Timing {
    /// Log-probs under the start weights (only with several mini-batches).
    pub old_logprobs: f64,
    /// Reference model forward (only with KL).
    pub reference: f64,
    pub forward: f64,
    pub backward: f64,
    pub optimizer: f64,
    pub total: f64,
}

/// What a step reports.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StepMetrics {
    /// Policy version of the weights written.
    pub step: i64,
    pub trained: bool,
    pub loss: f64,
    pub agent: RoleMetrics,
    pub designer: RoleMetrics,
    /// Gradient norm before clipping (the mean over mini-batches).
    pub grad_norm: f64,
    pub grad_norm_max: f64,
    pub grad_clip_factor: f64,
    pub optimizer_steps: u64,
    pub micro_batches: usize,
    /// Micro-batches that were one packed row of samples sharing a prompt, the samples in them,
    /// and the prompt tokens not computed again (`(samples − 1) · prompt` summed).
    pub shared_prompts: SharedPrompts,
    /// With [`Trainer::step_diagnosed`]: the update's size and its effect on the batch's log-probs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<Diagnostics>,
    pub time: Timing,
    /// Peak resident memory of the process so far (MiB), when the OS reports it.
    pub peak_rss_mib: Option<f64>,
}

/// [`StepMetrics::shared_prompts`].
#[derive(Debug, Clone, Default, Serialize)]
pub struct SharedPrompts {
    pub rows: usize,
    pub samples: usize,
    pub tokens_saved: usize,
}

/// What [`Trainer::step_diagnosed`] adds to a step's metrics (the KL to the reference is each
/// role's `kl`, measured even when the KL coefficient is 0).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Diagnostics {
    /// L2 norm of the change of all weights over the step.
    pub update_norm: f64,
    /// L2 norm of the weights at the start of the step.
    pub weight_norm: f64,
    /// Samples with a positive advantage (returns above their group's mean): mean log-prob per
    /// trained token before and after the update.
    pub win: Shift,
    /// Samples with a negative advantage.
    pub lose: Shift,
    /// Seconds of the extra forward after the update.
    pub after_s: f64,
}

/// Mean log-prob per trained token of a set of samples, before and after an update.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Shift {
    pub samples: usize,
    pub tokens: usize,
    pub before: f64,
    pub after: f64,
}

impl Shift {
    /// The shift of the samples `pick` selects, from each sample's (sum, count) of trained-token
    /// log-probs before and after.
    fn of(samples: &[Sample], before: &[(f64, usize)], after: &[(f64, usize)], pick: impl Fn(&Sample) -> bool) -> Shift {
        let mut s = Shift::default();
        let (mut b, mut a) = (0.0, 0.0);
        for (i, smp) in samples.iter().enumerate() {
            if pick(smp) && before[i].1 > 0 {
                s.samples += 1;
                s.tokens += before[i].1;
                b += before[i].0;
                a += after[i].0;
            }
        }
        if s.tokens > 0 {
            s.before = b / s.tokens as f64;
            s.after = a / s.tokens as f64;
        }
        s
    }
}

/// Each sample's (sum, count) of log-probs over its trained tokens, from rows aligned with its tokens.
fn trained_sums(sample: &Sample, lp: &[f32]) -> (f64, usize) {
    sample.mask.iter().enumerate().skip(1).filter(|(_, &m)| m != 0).fold((0.0, 0), |(s, n), (t, _)| (s + lp[t] as f64, n + 1))
}

/// L2 norm of the weights' difference from `base` (each parameter flattened, by name).
fn distance(model: &Model, base: &BTreeMap<String, Vec<f32>>) -> anyhow::Result<f64> {
    let mut sq = 0.0f64;
    for (name, var) in model.weights().named_vars() {
        let w: Vec<f32> = var.as_tensor().flatten_all()?.to_vec1()?;
        let b = base.get(name).ok_or_else(|| anyhow::anyhow!("no start weights for {name}"))?;
        sq += w.iter().zip(b).map(|(x, y)| ((x - y) as f64).powi(2)).sum::<f64>();
    }
    Ok(sq.sqrt())
}

/// Peak resident set size of this process in MiB (Linux `VmHWM`).
pub fn peak_rss_mib() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// The aggregation weight of each trained token of each of one mini-batch's samples.
fn sample_weights(samples: &[&Sample], agg: LossAgg, dr_norm: f64) -> Vec<f64> {
    let n = samples.len() as f64;
    let total: usize = samples.iter().map(|s| s.trained_tokens()).sum();
    samples
        .iter()
        .map(|s| match agg {
            LossAgg::SeqMeanTokenMean => 1.0 / (s.trained_tokens().max(1) as f64 * n),
            LossAgg::TokenMean => 1.0 / total.max(1) as f64,
            LossAgg::DrGrpo => 1.0 / (dr_norm * n),
        })
        .collect()
}

/// Per-token aggregation weights of one mini-batch's samples (index-aligned with tokens).
fn agg_weights(samples: &[&Sample], agg: LossAgg, dr_norm: f64) -> Vec<Vec<f64>> {
    samples
        .iter()
        .zip(sample_weights(samples, agg, dr_norm))
        .map(|(s, w)| s.mask.iter().enumerate().map(|(t, &m)| if t > 0 && m != 0 { w } else { 0.0 }).collect())
        .collect()
}

/// Micro-batches of sample indices: one role (the designer's first) and one temperature each,
/// sorted by length, at most `size` each.
fn micro_batches(samples: &[&Sample], size: usize) -> Vec<Vec<usize>> {
    let mut idx: Vec<usize> = (0..samples.len()).collect();
    let designer_first = |s: &Sample| u8::from(s.role != Role::Designer);
    idx.sort_by(|&a, &b| {
        designer_first(samples[a])
            .cmp(&designer_first(samples[b]))
            .then(samples[a].temperature.total_cmp(&samples[b].temperature))
            .then(samples[a].tokens.len().cmp(&samples[b].tokens.len()))
            .then(a.cmp(&b))
    });
    let mut out: Vec<Vec<usize>> = Vec::new();
    for i in idx {
        match out.last_mut() {
            Some(mb) if mb.len() < size && samples[mb[0]].temperature == samples[i].temperature && samples[mb[0]].role == samples[i].role => {
                mb.push(i)
            }
            _ => out.push(vec![i]),
        }
    }
    out
}

/// One forward/backward: sample indices, and the prompt length they share when they go as one
/// packed row.
#[derive(Debug, Clone, PartialEq)]
struct Micro {
    idx: Vec<usize>,
    prompt: Option<usize>,
}

/// Tokens before a sample's first trained one (all of them when none is trained).
fn prompt_len(s: &Sample) -> usize {
    s.mask.iter().enumerate().skip(1).find(|(_, &m)| m != 0).map_or(s.tokens.len(), |(t, _)| t)
}

/// Longest packed row: its attention scores take `4 · n²` bytes twice.
const MAX_PACKED: usize = 8192;

/// Multiply-adds saved by one packed row of a shared `prefix` and `rests` against the
/// sequences one by one (negative: packing costs more): per layer, the projections and MLP per
/// token, and the attention per causal (query, key) pair the kernels compute (a packed row's
/// rests also score each other's keys, masked).
fn packing_saving(c: &spade_model::ModelConfig, prefix: usize, rests: &[usize]) -> f64 {
    let (d, f, hd) = (c.hidden_size as f64, c.intermediate_size as f64, c.head_dim() as f64);
    let (qd, kd) = (c.num_attention_heads as f64 * hd, c.num_kv_heads() as f64 * hd);
    let per_token = d * (2.0 * qd + 2.0 * kd) + 3.0 * d * f;
    let per_pair = 2.0 * qd;
    let cost = |n: f64| n * per_token + n * n / 2.0 * per_pair;
    let apart: f64 = rests.iter().map(|&r| cost((prefix + r) as f64)).sum();
    apart - cost((prefix + rests.iter().sum::<usize>()) as f64)
}

/// Length of the common prefix of `a` and `b`.
fn common(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// The step's forward/backward units: with `share` (and a model config to cost them), samples
/// of one role and temperature whose prompts begin alike (a GRPO group's: the same system
/// prompt and task, often the same observation) packed in rows sharing their common prefix —
/// in prompt order, a sample joins the row before it while that raises the row's
/// [`packing_saving`] and the row stays within [`MAX_PACKED`] tokens —; the rest as
/// [`micro_batches`]; the designer's units first.
fn plan(samples: &[&Sample], size: usize, share: Option<&spade_model::ModelConfig>) -> Vec<Micro> {
    let mut units = Vec::new();
    let mut alone: Vec<usize> = Vec::new();
    match share {
        None => alone = (0..samples.len()).collect(),
        Some(c) => {
            let plen: Vec<usize> = samples.iter().map(|s| prompt_len(s)).collect();
            let prompt = |i: usize| &samples[i].tokens[..plen[i]];
            let mut idx: Vec<usize> = Vec::new();
            for (i, smp) in samples.iter().enumerate() {
                match plen[i] < smp.tokens.len() {
                    true => idx.push(i),
                    false => alone.push(i),
                }
            }
            let bucket = |i: usize| (u8::from(samples[i].role != Role::Designer), samples[i].temperature.to_bits());
            idx.sort_by(|&a, &b| {
                bucket(a).cmp(&bucket(b)).then(prompt(a).cmp(prompt(b))).then(samples[a].tokens.len().cmp(&samples[b].tokens.len())).then(a.cmp(&b))
            });
            // The open row: its samples, their shared prefix and the saving so far.
            let (mut row, mut prefix, mut saved): (Vec<usize>, usize, f64) = (Vec::new(), 0, 0.0);
            let flush = |row: &mut Vec<usize>, prefix: usize, saved: f64, units: &mut Vec<Micro>, alone: &mut Vec<usize>| {
                if row.len() >= 2 && saved > 0.0 {
                    units.push(Micro { idx: std::mem::take(row), prompt: Some(prefix) });
                } else {
                    alone.append(row);
                }
            };
            for i in idx {
                if let Some(&first) = row.first() {
                    let p = prefix.min(common(prompt(first), prompt(i)));
                    let rests: Vec<usize> = row.iter().chain([&i]).map(|&j| samples[j].tokens.len() - p).collect();
                    let fits = p + rests.iter().sum::<usize>() <= MAX_PACKED;
                    let s = if p > 0 && bucket(first) == bucket(i) { packing_saving(c, p, &rests) } else { f64::NEG_INFINITY };
                    if fits && s > saved {
                        row.push(i);
                        (prefix, saved) = (p, s);
                        continue;
                    }
                    flush(&mut row, prefix, saved, &mut units, &mut alone);
                }
                row = vec![i];
                (prefix, saved) = (plen[i], 0.0);
            }
            flush(&mut row, prefix, saved, &mut units, &mut alone);
        }
    }
    let rest: Vec<&Sample> = alone.iter().map(|&i| samples[i]).collect();
    units.extend(micro_batches(&rest, size).into_iter().map(|mb| Micro { idx: mb.into_iter().map(|j| alone[j]).collect(), prompt: None }));
    units.sort_by_key(|u| u8::from(samples[u.idx[0]].role != Role::Designer));
    units
}

/// The tokens of a micro-batch whose log-probs the loss reads (the masked ones after the first):
/// the model runs its head only there.
fn needed<S: std::borrow::Borrow<Sample>>(samples: &[S], mb: &[usize]) -> Vec<Vec<bool>> {
    mb.iter().map(|&i| samples[i].borrow().mask.iter().enumerate().map(|(t, &m)| t > 0 && m != 0).collect()).collect()
}

/// The model config to cost shared-prompt packing with ([`plan`]), when `cfg` packs.
fn share_config<'m>(model: &'m Model, cfg: &StepConfig) -> Option<&'m spade_model::ModelConfig> {
    (cfg.share_prompts && cfg.checkpointing).then(|| model.config())
}

/// Log-probs of one unit's sequences without gradient: packed behind their shared `prompt`
/// when the unit has one, as the gradient forward scores them.
fn score_no_grad(model: &Model, seqs: &[Vec<u32>], prompt: Option<usize>, temp: f32, need: &[Vec<bool>]) -> anyhow::Result<Vec<Vec<f32>>> {
    match prompt {
        Some(p) => rows(&model.token_logprobs_shared_prefix(seqs, p, temp, need, None)?.0),
        None => Ok(model.token_logprobs_no_grad(seqs, temp, Some(need))?),
    }
}

fn rows(t: &Tensor) -> anyhow::Result<Vec<Vec<f32>>> {
    Ok(t.detach().to_vec2::<f32>()?)
}

/// A gradient buffer per parameter, zeroed.
pub fn zero_grads(model: &Model) -> BTreeMap<String, Vec<f32>> {
    model.weights().named_vars().iter().map(|(k, v)| (k.clone(), spade_model::zeros(v.elem_count()))).collect()
}

impl Trainer {
    /// Open `--model`: a .gguf, a Hugging Face folder, or a spade checkpoint (its optimizer and
    /// trainer state are read when present).
    pub fn open(path: &Path, device: &Device) -> anyhow::Result<Trainer> {
        spade_model::keep_freed_memory();
        let model = spade_model::load(path, device)?;
        let ck = Checkpoint::new(path);
        let state = TrainerState::read(path)?;
        let vars = model.weights().named_vars();
        let opt_path = ck.optimizer_path();
        let opt = if path.is_dir() && opt_path.exists() {
            load_optimizer(&opt_path, vars, state.optimizer_steps)?
        } else {
            if state.optimizer_steps > 0 {
                bail!(
                    "{}: trainer state records {} optimizer steps but the folder has no {}",
                    path.display(),
                    state.optimizer_steps,
                    spade_model::checkpoint::OPTIMIZER_FILE
                );
            }
            optim::State::zeros(vars)
        };
        Ok(Trainer { model, opt, state })
    }

    /// A trainer over a model already in memory (fresh optimizer, step 0).
    pub fn from_model(model: Model, initial_model: &str) -> Trainer {
        spade_model::keep_freed_memory();
        let opt = optim::State::zeros(model.weights().named_vars());
        let state = TrainerState { format: 1, step: 0, initial_model: initial_model.to_string(), optimizer_steps: 0, rng: None, last_config: None };
        Trainer { model, opt, state }
    }

    /// Accumulate the gradient of one mini-batch's loss into `grads`; returns the loss.
    #[allow(clippy::too_many_arguments)]
    fn accumulate(
        &self,
        samples: &[&Sample],
        old: Option<&[Vec<f32>]>,
        reference: Option<&Model>,
        cfg: &StepConfig,
        dr_norm: f64,
        grads: &mut BTreeMap<String, Vec<f32>>,
        m: &mut StepMetrics,
        mut sums: Option<&mut [(f64, usize)]>,
    ) -> anyhow::Result<f64> {
        let weights = agg_weights(samples, cfg.loss_agg, dr_norm);
        let obj = &cfg.objective;
        let mut loss = 0.0;
        let units = plan(samples, cfg.micro_batch.max(1), share_config(&self.model, cfg));
        let roles: Vec<Role> = units.iter().map(|u| samples[u.idx[0]].role).collect();
        for (k, Micro { idx: mb, prompt }) in units.into_iter().enumerate() {
            let seqs: Vec<Vec<u32>> = mb.iter().map(|&i| samples[i].tokens.clone()).collect();
            let temp = samples[mb[0]].temperature;
            let need = needed(samples, &mb);
            let t0 = Instant::now();
            let keep = cfg.keep_activations_mib.saturating_mul(1 << 20);
            if let Some(p) = prompt {
                m.shared_prompts.rows += 1;
                m.shared_prompts.samples += mb.len();
                m.shared_prompts.tokens_saved += (mb.len() - 1) * p;
            }
            let checkpointed = match (prompt, cfg.checkpointing && seqs.iter().any(|q| q.len() >= 2)) {
                (Some(p), _) => self.model.token_logprobs_shared_prefix(&seqs, p, temp, &need, Some(keep))?.1,
                (None, true) => Some(self.model.token_logprobs_blockwise(&seqs, temp, Some(&need), keep)?),
                (None, false) => None,
            };
            let lp = match &checkpointed {
                Some(c) => c.logprobs().clone(),
                None => self.model.token_logprobs_needed(&seqs, temp, Some(&need))?,
            };
            let lp_vals = rows(&lp)?;
            m.time.forward += t0.elapsed().as_secs_f64();
            let ref_vals = match reference {
                Some(r) => {
                    let t0 = Instant::now();
                    let v = score_no_grad(r, &seqs, prompt, temp, &need)?;
                    m.time.reference += t0.elapsed().as_secs_f64();
                    Some(v)
                }
                _ => None,
            };
            let (b, s) = lp.dims2()?;
            let mut coef = vec![0f32; b * s];
            for (row, &i) in mb.iter().enumerate() {
                let smp = samples[i];
                let rm = match smp.role {
                    Role::Agent => &mut m.agent,
                    Role::Designer => &mut m.designer,
                };
                for t in 1..smp.tokens.len() {
                    let w = weights[i][t];
                    if w == 0.0 {
                        continue;
                    }
                    let cur = lp_vals[row][t] as f64;
                    let o = old.map(|o| o[i][t] as f64).unwrap_or(cur);
                    let r = ref_vals.as_ref().map(|v| v[row][t] as f64);
                    let tt = if cfg.supervised { TokenTerms::nll(cur) } else { obj.token(cur, o, smp.behaviour[t] as f64, smp.advantage, r) };
                    coef[row * s + t] = (w * tt.grad) as f32;
                    loss += w * tt.loss;
                    rm.loss += w * tt.loss;
                    rm.tokens += 1;
                    rm.n_clipped += usize::from(tt.clipped);
                    rm.n_capped += usize::from(tt.tis_capped);
                    rm.tis_sum += tt.tis;
                    rm.tis_min = if rm.tokens == 1 { tt.tis } else { rm.tis_min.min(tt.tis) };
                    rm.tis_max = rm.tis_max.max(tt.tis);
                    rm.kl_sum += tt.kl;
                    rm.nll_sum -= cur;
                    rm.ratio_sum += (cur - o).exp();
                    rm.ratio_max = rm.ratio_max.max((cur - o).exp());
                }
                if let Some(sums) = sums.as_deref_mut() {
                    sums[i] = trained_sums(smp, &lp_vals[row]);
                }
                rm.samples += 1;
                rm.adv_abs_sum += smp.advantage.abs();
            }
            let t0 = Instant::now();
            let coef = Tensor::from_vec(coef, (b, s), lp.device())?;
            match checkpointed {
                Some(c) => {
                    drop(lp);
                    c.backward_into(&coef, grads)?;
                }
                None => spade_model::add_store(&self.model, &(lp * coef)?.sum_all()?.backward()?, grads)?,
            }
            m.time.backward += t0.elapsed().as_secs_f64();
            m.micro_batches += 1;
            // The designer's micro-batches come first: at the last of them the buffer holds
            // exactly its part of the gradient.
            let last_of_role = roles.get(k + 1) != Some(&roles[k]);
            if last_of_role && roles[k] == Role::Designer {
                m.designer.grad_norm += optim::global_norm(grads);
            } else if last_of_role && roles[0] == Role::Agent {
                m.agent.grad_norm += optim::global_norm(grads);
            }
        }
        Ok(loss)
    }

    /// The loss and its gradient for `samples` as one mini-batch at the current weights (no
    /// update): what the agreement test compares with an independent implementation.
    pub fn loss_and_gradients(
        &self,
        samples: &[Sample],
        cfg: &StepConfig,
        reference: Option<&Model>,
    ) -> anyhow::Result<(f64, BTreeMap<String, Vec<f32>>, StepMetrics)> {
        let refs: Vec<&Sample> = samples.iter().collect();
        let mut grads = zero_grads(&self.model);
        let mut m = StepMetrics::default();
        let loss = self.accumulate(&refs, None, reference, cfg, dr_norm(samples), &mut grads, &mut m, None)?;
        m.loss = loss;
        m.agent.finish();
        m.designer.finish();
        Ok((loss, grads, m))
    }

    /// One GRPO step: advantages must already be set on `samples`. With no sample the weights
    /// stay and only the step count advances. A `reference` is scored for the KL term (and its
    /// metric) whatever the coefficient: pass none when neither is wanted.
    pub fn step(&mut self, samples: &[Sample], cfg: &StepConfig, reference: Option<&Model>) -> anyhow::Result<StepMetrics> {
        self.step_diagnosed(samples, cfg, reference, false)
    }

    /// [`Trainer::step`], and with `diagnose` the metrics' [`Diagnostics`]: the update's norm and
    /// the mean log-prob of the positive- and negative-advantage samples before and after it (one
    /// more forward of the batch, without gradient, after the update).
    pub fn step_diagnosed(&mut self, samples: &[Sample], cfg: &StepConfig, reference: Option<&Model>, diagnose: bool) -> anyhow::Result<StepMetrics> {
        let start = Instant::now();
        let base: Option<BTreeMap<String, Vec<f32>>> = match diagnose && !samples.is_empty() {
            true => Some(
                self.model
                    .weights()
                    .named_vars()
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), v.as_tensor().flatten_all()?.to_vec1::<f32>()?)))
                    .collect::<anyhow::Result<_>>()?,
            ),
            false => None,
        };
        let mut before: Vec<(f64, usize)> = vec![(0.0, 0); samples.len()];
        let mut m = StepMetrics { grad_clip_factor: 1.0, ..Default::default() };
        let nmb = cfg.mini_batches.max(1).min(samples.len().max(1));
        let dr = dr_norm(samples);
        // Log-probs under the start weights: with one update per step they equal the values the
        // gradient forward computes (same weights), so they are taken from it; with several,
        // they are computed first, without gradient.
        let old: Option<Vec<Vec<f32>>> = if nmb > 1 {
            let t0 = Instant::now();
            let old = logprobs_no_grad(&self.model, samples, cfg, nmb)?;
            m.time.old_logprobs = t0.elapsed().as_secs_f64();
            Some(old)
        } else {
            None
        };
        let mut norms = Vec::new();
        for idx in mini_batch_indices(samples.len(), nmb) {
            let part: Vec<&Sample> = idx.iter().map(|&i| &samples[i]).collect();
            let part_old: Option<Vec<Vec<f32>>> = old.as_ref().map(|o| idx.iter().map(|&i| o[i].clone()).collect());
            let mut grads = zero_grads(&self.model);
            // The diagnostics' log-probs before the update: from this forward when it runs at the
            // start weights (one mini-batch), else from `old`.
            let mut part_sums = match base.is_some() && old.is_none() {
                true => Some(vec![(0.0, 0); part.len()]),
                false => None,
            };
            m.loss += self.accumulate(&part, part_old.as_deref(), reference, cfg, dr, &mut grads, &mut m, part_sums.as_deref_mut())? / nmb as f64;
            for (&i, sums) in idx.iter().zip(part_sums.into_iter().flatten()) {
                before[i] = sums;
            }
            let t0 = Instant::now();
            let norm = optim::global_norm(&grads);
            let factor = optim::clip_factor(norm, cfg.adamw.max_grad_norm);
            optim::step(&cfg.adamw, &mut self.opt, self.model.weights().named_vars(), &grads, factor)?;
            m.time.optimizer += t0.elapsed().as_secs_f64();
            norms.push(norm);
            m.grad_clip_factor = m.grad_clip_factor.min(factor);
            m.trained = true;
        }
        m.agent.loss /= nmb as f64;
        m.designer.loss /= nmb as f64;
        m.agent.grad_norm /= nmb as f64;
        m.designer.grad_norm /= nmb as f64;
        m.agent.finish();
        m.designer.finish();
        if !norms.is_empty() {
            m.grad_norm = norms.iter().sum::<f64>() / norms.len() as f64;
            m.grad_norm_max = norms.iter().cloned().fold(0.0, f64::max);
        }
        if let Some(base) = &base {
            if let Some(old) = &old {
                for (i, smp) in samples.iter().enumerate() {
                    before[i] = trained_sums(smp, &old[i]);
                }
            }
            let t0 = Instant::now();
            let after: Vec<(f64, usize)> =
                logprobs_no_grad(&self.model, samples, cfg, nmb)?.iter().zip(samples).map(|(lp, smp)| trained_sums(smp, lp)).collect();
            m.diagnostics = Some(Diagnostics {
                update_norm: distance(&self.model, base)?,
                weight_norm: base.values().flatten().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt(),
                win: Shift::of(samples, &before, &after, |s| s.advantage > 0.0),
                lose: Shift::of(samples, &before, &after, |s| s.advantage < 0.0),
                after_s: t0.elapsed().as_secs_f64(),
            });
        }
        self.state.step += 1;
        self.state.optimizer_steps = self.opt.step;
        self.state.last_config = serde_json::to_value(cfg).ok();
        m.step = self.state.step;
        m.optimizer_steps = self.opt.step;
        m.time.total = start.elapsed().as_secs_f64();
        m.peak_rss_mib = peak_rss_mib();
        Ok(m)
    }

    /// Write the checkpoint folder atomically: the Hugging Face files, `optimizer.safetensors` and
    /// `trainer_state.json` go to a temporary sibling folder that is renamed into place (an
    /// existing folder of that name is replaced).
    /// Writes the checkpoint folder atomically, with `card` as its `README.md` (see [`crate::card`]).
    pub fn save(&self, dir: &Path, card: Option<&str>) -> anyhow::Result<()> {
        self.save_with(dir, card, &[])
    }

    /// [`Trainer::save`], with `extra` files (name, bytes) in the same atomically installed folder.
    pub fn save_with(&self, dir: &Path, card: Option<&str>, extra: &[(&str, &[u8])]) -> anyhow::Result<()> {
        let tmp = temp_sibling(dir)?;
        let result = (|| -> anyhow::Result<()> {
            let ck = Checkpoint::new(&tmp);
            ck.save_model(&self.model)?;
            save_optimizer(&ck.optimizer_path(), &self.opt, self.model.weights().named_vars())?;
            self.state.write(&ck)?;
            if let Some(card) = card {
                ck.write_file("README.md", card.as_bytes())?;
            }
            for (name, bytes) in extra {
                ck.write_file(name, bytes)?;
            }
            Ok(())
        })();
        if let Err(e) = result {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
        install_folder(&tmp, dir)
    }
}

/// Each sample's log-probs under `model` (no gradient), index-aligned with its tokens, scored
/// `micro_batch` sequences at a time (one temperature and role per micro-batch).
fn logprobs_no_grad(model: &Model, samples: &[Sample], cfg: &StepConfig, nmb: usize) -> anyhow::Result<Vec<Vec<f32>>> {
    let mut out = vec![Vec::new(); samples.len()];
    // The units of the gradient forward ([`plan`] per mini-batch), so that at the same weights
    // these log-probs equal its values bit for bit.
    for part in mini_batch_indices(samples.len(), nmb.max(1)) {
        let refs: Vec<&Sample> = part.iter().map(|&i| &samples[i]).collect();
        for Micro { idx, prompt } in plan(&refs, cfg.micro_batch.max(1), share_config(model, cfg)) {
            let mb: Vec<usize> = idx.iter().map(|&j| part[j]).collect();
            let seqs: Vec<Vec<u32>> = mb.iter().map(|&i| samples[i].tokens.clone()).collect();
            let need = needed(samples, &mb);
            let temp = samples[mb[0]].temperature;
            let v = score_no_grad(model, &seqs, prompt, temp, &need)?;
            for (row, i) in v.into_iter().zip(mb) {
                out[i] = row;
            }
        }
    }
    Ok(out)
}

/// Mean negative log-likelihood per masked token of `samples` under `model` (no gradient),
/// scored `micro_batch` sequences at a time; with the number of tokens.
pub fn mean_nll(model: &Model, samples: &[Sample], micro_batch: usize) -> anyhow::Result<(f64, usize)> {
    let cfg = StepConfig { micro_batch, ..Default::default() };
    let (sum, n) = logprobs_no_grad(model, samples, &cfg, 1)?
        .iter()
        .zip(samples)
        .map(|(lp, smp)| trained_sums(smp, lp))
        .fold((0.0, 0), |(s, n), (s1, n1)| (s + s1, n + n1));
    Ok((if n == 0 { 0.0 } else { -sum / n as f64 }, n))
}

/// Dr. GRPO's constant: the longest trained span of the step.
fn dr_norm(samples: &[Sample]) -> f64 {
    samples.iter().map(|s| s.trained_tokens()).max().unwrap_or(1).max(1) as f64
}

const EXP_AVG: &str = "exp_avg.";
const EXP_AVG_SQ: &str = "exp_avg_sq.";

fn save_optimizer(path: &Path, st: &optim::State, vars: &BTreeMap<String, spade_model::candle_core::Var>) -> anyhow::Result<()> {
    let mut tensors = Vec::with_capacity(2 * vars.len());
    for (name, var) in vars {
        let shape = var.dims().to_vec();
        let m = st.exp_avg.get(name).ok_or_else(|| anyhow::anyhow!("optimizer state lacks {name}"))?;
        let v = st.exp_avg_sq.get(name).ok_or_else(|| anyhow::anyhow!("optimizer state lacks {name}"))?;
        tensors.push((format!("{EXP_AVG}{name}"), shape.clone(), m.as_slice()));
        tensors.push((format!("{EXP_AVG_SQ}{name}"), shape, v.as_slice()));
    }
    spade_model::checkpoint::save_f32(path, tensors)?;
    Ok(())
}

fn load_optimizer(path: &Path, vars: &BTreeMap<String, spade_model::candle_core::Var>, steps: u64) -> anyhow::Result<optim::State> {
    let mut t = spade_model::checkpoint::load_f32(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let mut st = optim::State { step: steps, ..Default::default() };
    for (name, var) in vars {
        for (prefix, map) in [(EXP_AVG, &mut st.exp_avg), (EXP_AVG_SQ, &mut st.exp_avg_sq)] {
            let key = format!("{prefix}{name}");
            let (shape, x) = t.remove(&key).ok_or_else(|| anyhow::anyhow!("{}: no tensor {key}", path.display()))?;
            if shape != var.dims() {
                bail!("{}: tensor {key} has shape {shape:?}, the model's {:?}", path.display(), var.dims());
            }
            map.insert(name.clone(), x);
        }
    }
    Ok(st)
}

/// Mean of the designer samples' staleness (`step − policy_version`) and its maximum.
pub fn staleness(samples: &[Sample], step: i64) -> Option<(f64, i64)> {
    let v: Vec<i64> = samples.iter().filter(|s| s.role == Role::Designer).filter_map(|s| s.policy_version).map(|p| step - p).collect();
    if v.is_empty() {
        return None;
    }
    Some((v.iter().sum::<i64>() as f64 / v.len() as f64, *v.iter().max().unwrap()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn smp(len: usize, t: f32, masked: &[usize]) -> Sample {
        let mut mask = vec![0u8; len];
        for &i in masked {
            mask[i] = 1;
        }
        Sample {
            role: Role::Agent,
            tokens: vec![5; len],
            mask,
            behaviour: vec![0.0; len],
            temperature: t,
            reward: 0.0,
            group: String::new(),
            advantage: 1.0,
            policy_version: None,
        }
    }

    #[test]
    fn aggregation_weights_sum_as_documented() {
        let a = smp(6, 1.0, &[0, 2, 3]); // token 0 never counts → 2 trained tokens
        let b = smp(5, 1.0, &[1, 2, 3, 4]);
        let refs = vec![&a, &b];
        let sum = |w: &Vec<Vec<f64>>| w.iter().map(|r| r.iter().sum::<f64>()).collect::<Vec<_>>();
        let w = agg_weights(&refs, LossAgg::SeqMeanTokenMean, 4.0);
        assert_eq!(w[0][0], 0.0);
        assert_eq!(sum(&w), vec![0.5, 0.5]);
        let w = agg_weights(&refs, LossAgg::TokenMean, 4.0);
        assert_eq!(sum(&w), vec![2.0 / 6.0, 4.0 / 6.0]);
        let w = agg_weights(&refs, LossAgg::DrGrpo, 4.0);
        assert_eq!(sum(&w), vec![2.0 / 8.0, 4.0 / 8.0]);
    }

    #[test]
    fn micro_batches_share_a_temperature_and_respect_the_size() {
        let s = [smp(3, 1.0, &[1]), smp(9, 0.6, &[1]), smp(4, 1.0, &[1]), smp(2, 1.0, &[1]), smp(5, 0.6, &[1])];
        let refs: Vec<&Sample> = s.iter().collect();
        let mb = micro_batches(&refs, 2);
        assert_eq!(mb, vec![vec![4, 1], vec![3, 0], vec![2]]);
        // Roles never share a micro-batch; the designer's come first.
        let mut s = s;
        s[0].role = Role::Designer;
        s[2].role = Role::Designer;
        let refs: Vec<&Sample> = s.iter().collect();
        assert_eq!(micro_batches(&refs, 2), vec![vec![0, 2], vec![4, 1], vec![3]]);
    }

    /// A sample of `prompt` tokens (`seed` picks them) and `rest` trained ones.
    fn prompted(role: Role, seed: u32, prompt: usize, rest: usize, t: f32) -> Sample {
        let n = prompt + rest;
        let tokens: Vec<u32> =
            (0..n).map(|j| if j < prompt { 3 + (seed * 31 + j as u32 * 7) % 200 } else { 3 + (j as u32 * 13 + n as u32) % 200 }).collect();
        let mask = (0..n).map(|j| u8::from(j >= prompt)).collect();
        Sample { role, tokens, mask, temperature: t, ..smp(n, t, &[]) }
    }

    /// The default model's shape.
    fn smollm() -> spade_model::ModelConfig {
        spade_model::ModelConfig::new(spade_model::Family::Llama, 49_152, 576, 1536, 30, 9, 3, 64)
    }

    #[test]
    fn plan_packs_samples_that_share_a_prompt_where_it_pays() {
        let c = smollm();
        let s = [
            prompted(Role::Agent, 1, 300, 40, 0.7),
            prompted(Role::Agent, 1, 300, 60, 0.7),
            prompted(Role::Agent, 1, 300, 50, 1.0), // another temperature
            prompted(Role::Designer, 2, 1200, 650, 0.7),
            prompted(Role::Designer, 2, 1200, 700, 0.7),
            prompted(Role::Agent, 3, 10, 2000, 0.7), // a short prompt: the rests' cross attention costs more
            prompted(Role::Agent, 3, 10, 2100, 0.7),
            prompted(Role::Agent, 4, 300, 40, 0.7), // alone
            prompted(Role::Agent, 6, 150, 30, 0.7),
            {
                // The same first 100 prompt tokens as the one before, then another observation.
                let mut x = prompted(Role::Agent, 6, 150, 35, 0.7);
                x.tokens[100..150].iter_mut().for_each(|t| *t += 1);
                x
            },
        ];
        let refs: Vec<&Sample> = s.iter().collect();
        let units = plan(&refs, 1, Some(&c));
        assert_eq!(units[0], Micro { idx: vec![3, 4], prompt: Some(1200) }, "the designer's group first");
        assert!(units.contains(&Micro { idx: vec![0, 1], prompt: Some(300) }));
        assert!(units.contains(&Micro { idx: vec![8, 9], prompt: Some(100) }), "a common prefix short of the prompt");
        assert_eq!(units.iter().filter(|u| u.prompt.is_some()).count(), 3);
        let mut all: Vec<usize> = units.iter().flat_map(|u| u.idx.clone()).collect();
        all.sort();
        assert_eq!(all, (0..s.len()).collect::<Vec<_>>(), "every sample once");
        assert!(units.iter().skip_while(|u| samples_role(&s, u) == Role::Designer).all(|u| samples_role(&s, u) == Role::Agent));
        // Off: the plain micro-batches.
        assert!(plan(&refs, 1, None).iter().all(|u| u.prompt.is_none() && u.idx.len() == 1));
        // Rows stay within MAX_PACKED tokens.
        let big: Vec<Sample> = (0..6).map(|_| prompted(Role::Agent, 5, 3000, 2000, 0.7)).collect();
        let refs: Vec<&Sample> = big.iter().collect();
        let units = plan(&refs, 1, Some(&c));
        assert_eq!(units.iter().map(|u| u.idx.len()).collect::<Vec<_>>(), vec![2, 2, 2]);
    }

    fn samples_role(s: &[Sample], u: &Micro) -> Role {
        s[u.idx[0]].role
    }

    /// A step's loss and every gradient with shared prompts packed equal them scored one by one.
    #[test]
    fn packed_prompts_keep_the_loss_and_gradients() {
        let model = spade_model::tiny::tiny_model(7, spade_model::tiny::TinySpec::default(), &Device::Cpu).unwrap();
        let mut s: Vec<Sample> = Vec::new();
        let seeds = [
            (Role::Designer, 1),
            (Role::Designer, 1),
            (Role::Agent, 2),
            (Role::Agent, 2),
            (Role::Agent, 2),
            (Role::Agent, 3),
            (Role::Agent, 4),
            (Role::Agent, 4),
        ];
        for (k, (role, seed)) in seeds.into_iter().enumerate() {
            let mut x = prompted(role, seed, 260, 12 + 9 * k, 0.8);
            if k == 7 {
                // Its prompt leaves the one before after 200 tokens.
                x.tokens[200..260].iter_mut().for_each(|t| *t += 1);
            }
            x.advantage = [1.0, -1.0, 0.5, -0.25, 0.75, 1.5, -0.5, 0.25][k];
            x.behaviour = x.mask.iter().map(|&m| if m != 0 { -2.5 } else { 0.0 }).collect();
            s.push(x);
        }
        let refs: Vec<&Sample> = s.iter().collect();
        let units = plan(&refs, 1, Some(model.config()));
        assert_eq!(units.iter().filter(|u| u.prompt.is_some()).count(), 3, "three groups packed");
        assert!(units.contains(&Micro { idx: vec![6, 7], prompt: Some(200) }));
        let trainer = Trainer::from_model(model, "tiny");
        let on = StepConfig::default();
        let off = StepConfig { share_prompts: false, ..on };
        let (la, ga, ma) = trainer.loss_and_gradients(&s, &on, None).unwrap();
        let (lb, gb, mb) = trainer.loss_and_gradients(&s, &off, None).unwrap();
        assert_eq!((ma.shared_prompts.rows, ma.shared_prompts.samples, ma.shared_prompts.tokens_saved), (3, 7, 260 + 2 * 260 + 200));
        assert_eq!((ma.micro_batches, mb.micro_batches, mb.shared_prompts.rows), (4, 8, 0));
        assert!((la - lb).abs() <= 1e-6 * lb.abs().max(1e-3), "loss {la} against {lb}");
        for (k, b) in &gb {
            let a = &ga[k];
            let norm = b.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
            let diff = a.iter().zip(b).map(|(x, y)| ((*x - *y) as f64).powi(2)).sum::<f64>().sqrt();
            assert!(diff <= 1e-5 * norm.max(1e-12), "{k}: relative difference {}", diff / norm);
        }
    }
}
