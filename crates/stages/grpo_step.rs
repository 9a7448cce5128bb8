//! `spade-grpo-step`: one GRPO update of both roles (agent episodes, delayed designer samples with
//! TIS), from the current checkpoint to the next.
//!
//! Reads the agent batch (rollouts: `token_ids`, `loss_mask`, `logprobs`, `temperature`, `env_id`,
//! `arm`, `return`; `status` ≠ ok rows left out) and the designer batch (candidates: `candidate_id`,
//! `prompt_ids`, `response_ids`, `response_logprobs`, `temperature`, `skill` (`doc_id` with
//! `--designer-group doc`), joined with scores: `candidate_id`, `designer_reward`, `reward_kind` —
//! `unplayed` rows and unscored candidates are not trained). Computes the advantages (agent per
//! (env_id, arm), standardised; designer per skill or document, centred), the token-level clipped
//! objective against the log-probs under the start weights, weighted by the truncated importance
//! weight `min(exp(logπ_old − logπ_behaviour), C)`, an optional k3 KL to a reference, and applies
//! AdamW with gradient clipping, accumulating gradients over micro-batches. Writes the next
//! checkpoint folder atomically (Hugging Face files + `optimizer.safetensors` +
//! `trainer_state.json`, whose `step` is the policy version of the weights written). A step with
//! nothing to train writes the same weights with the step advanced.

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use serde::Serialize;
use spade_cli::Common;
use spade_train::grpo::{self, Written};
use spade_train::{AdamW, Balance, DesignerGroup, DesignerScale, GrpoStep, LossAgg, Norm, Objective, StepConfig, TrainerState, Update};

const EXAMPLES: &str = "\
Examples:
  spade-grpo-step --model ckpt/step-0003 --rollouts rollouts.parquet --candidates candidates.parquet --scores scores.parquet -o ckpt/step-0004
  spade-grpo-step --model models/smollm2.gguf --rollouts 'round-0/step-*/rollouts.parquet' -o ckpt/step-0001 --metrics train.jsonl
  spade-grpo-step --model ckpt/step-0004 --rollouts r.parquet --frozen-designer --kl-coef 0.005 -o ckpt/step-0005
  spade-grpo-step --model ckpt/step-0005 --rollouts r.parquet --diagnostics -o ckpt/step-0006 --metrics train.jsonl";

/// One GRPO update of both roles (agent episodes, delayed designer samples with TIS).
#[derive(Debug, Parser, Serialize)]
#[command(name = "spade-grpo-step", version, about, long_about = None, after_help = EXAMPLES)]
struct Args {
    #[command(flatten)]
    #[serde(skip)]
    model: spade_model::ModelArgs,

    /// Agent batch: rollouts tables (shards, globs).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    rollouts: Vec<String>,

    /// Designer batch: candidates, joined with --scores on candidate_id.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    candidates: Vec<String>,

    /// Scores of the designer batch (`designer_reward`, `reward_kind`).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    scores: Vec<String>,

    /// Output checkpoint folder (written atomically; replaced if it exists).
    #[arg(short, long, value_name = "DIR")]
    output: PathBuf,

    /// KL reference model (default: the run's initial model, from trainer_state.json).
    #[arg(long, value_name = "PATH")]
    ref_model: Option<PathBuf>,

    /// KL coefficient β of the k3 estimator (0, the reference's value: no KL, no reference forward).
    #[arg(long, default_value_t = 0.0)]
    kl_coef: f64,

    /// Learning rate.
    #[arg(long, default_value_t = 1e-6)]
    lr: f64,

    /// AdamW β1.
    #[arg(long, default_value_t = 0.9)]
    beta1: f64,

    /// AdamW β2.
    #[arg(long, default_value_t = 0.98)]
    beta2: f64,

    /// AdamW ε.
    #[arg(long, default_value_t = 1e-8)]
    adam_eps: f64,

    /// AdamW decoupled weight decay.
    #[arg(long, default_value_t = 0.1)]
    weight_decay: f64,

    /// Max global gradient norm (0: no clipping).
    #[arg(long, default_value_t = 1.0)]
    max_grad_norm: f64,

    /// Lower ratio clip ε_low: the ratio is clipped to [1 − ε_low, 1 + ε_high].
    #[arg(long, default_value_t = 0.2)]
    eps_low: f64,

    /// Upper ratio clip ε_high.
    #[arg(long, default_value_t = 0.28)]
    eps_high: f64,

    /// Dual-clip constant c > 1 bounding the loss of negative-advantage tokens (off by default, as the reference).
    #[arg(long, value_name = "C")]
    dual_clip: Option<f64>,

    /// Cap C of the truncated importance weight min(exp(logπ_old − logπ_behaviour), C).
    #[arg(long, default_value_t = 2.0)]
    tis_cap: f64,

    /// Loss aggregation: seq-mean-token-mean (the reference), token-mean or dr-grpo.
    #[arg(long, default_value = "seq-mean-token-mean", value_name = "MODE")]
    loss_agg: LossAgg,

    /// Sequences per forward/backward; gradients accumulate over micro-batches (memory is bounded by it).
    #[arg(long, default_value_t = 1, value_name = "N")]
    micro_batch: usize,

    /// Optimizer updates per step, each over 1/N of the samples (1: one update, as the reference).
    #[arg(long, default_value_t = 1, value_name = "N")]
    mini_batches: usize,

    /// Differentiate the whole network at once with candle's autograd graph instead of block by block
    /// (a reference path: slower, and memory grows with layers × sequence length²).
    #[arg(long)]
    no_checkpointing: bool,

    /// Score every sample on its own: by default samples of one role whose prompts begin with the
    /// same tokens (a GRPO group's) go through the model as one packed row, the common prefix
    /// computed once, where that costs fewer operations (with the blockwise backward only;
    /// gradients equal to float rounding).
    #[arg(long)]
    no_share_prompts: bool,

    /// MiB of block activations a micro-batch's forward may keep, so those blocks' backward skips their
    /// recomputation (the default keeps all 30 blocks of the default model at 1 × ~2,500 tokens; 0: recompute all).
    #[arg(long, default_value_t = spade_train::trainer::KEEP_ACTIVATIONS_MIB, value_name = "MIB")]
    keep_activations: usize,

    /// Designer advantage groups: skill (the reference) or doc.
    #[arg(long, default_value = "skill", value_name = "KEY")]
    designer_group: DesignerGroup,

    /// Designer advantage: center (r − mean, the reference), std ((r − mean)/(std + ε)) or none (raw reward).
    #[arg(long, default_value = "center", value_name = "MODE")]
    designer_norm: Norm,

    /// Factor on the designer advantage: a number, or auto = min(agent samples / designer samples ×
    /// --designer-interval, --designer-scale-max), the reference's balance of the two roles' gradients
    /// (the designer has far fewer samples, trained once per --designer-interval agent steps).
    #[arg(long, default_value = "1", value_name = "auto|X")]
    designer_scale: DesignerScale,

    /// Agent steps per designer batch (the round's STEPS), for --designer-scale auto.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    designer_interval: u32,

    /// Cap of --designer-scale auto (the reference's 50).
    #[arg(long, default_value_t = 50.0)]
    designer_scale_max: f64,

    /// Agent advantage per (env_id, arm): std (the reference), center or none.
    #[arg(long, default_value = "std", value_name = "MODE")]
    agent_norm: Norm,

    /// Arms whose episodes train the agent: nohint (the reference: hint plays only measure regret)
    /// or hint,nohint.
    #[arg(long, default_value = "nohint", value_name = "ARMS")]
    train_arms: String,

    /// Do not train designer samples (ablation); --candidates/--scores are ignored.
    #[arg(long)]
    frozen_designer: bool,

    /// Run the update in another program: a shell command that gets `--plan FILE` (the batch with
    /// its advantages, micro- and mini-batches and this step's configuration) and writes the
    /// updated weights and optimizer state, e.g. `torchrun --nproc-per-node 2
    /// scripts/grpo_step_fsdp.py` (PyTorch FSDP); the tables, advantages, card and checkpoint
    /// stay this program's.
    #[arg(long, value_name = "CMD")]
    trainer: Option<String>,

    /// Measure what the step did (in the metrics' `diagnostics`): the norm of the weight update,
    /// the mean log-prob per token of the positive- and negative-advantage samples before and after
    /// it (one more forward of the batch), and each role's `kl` to the reference (the run's
    /// initial model unless --ref-model) even when --kl-coef is 0 (one forward of the reference).
    #[arg(long)]
    diagnostics: bool,

    #[command(flatten)]
    common: Common,
}

fn main() -> ExitCode {
    spade_cli::main(|a: &Args| &a.common, run)
}

fn run(args: Args) -> anyhow::Result<()> {
    let t0 = std::time::Instant::now();
    anyhow::ensure!(args.micro_batch > 0, "--micro-batch must be ≥ 1");
    anyhow::ensure!(args.mini_batches > 0, "--mini-batches must be ≥ 1");
    anyhow::ensure!(args.tis_cap > 0.0, "--tis-cap must be > 0");
    anyhow::ensure!(args.designer_scale_max.is_finite() && args.designer_scale_max >= 0.0, "--designer-scale-max must be a number ≥ 0");
    if let Some(c) = args.dual_clip {
        anyhow::ensure!(c > 1.0, "--dual-clip must be > 1");
    }
    if !args.frozen_designer && !args.candidates.is_empty() && args.scores.is_empty() {
        anyhow::bail!("--candidates needs --scores (the designer rewards)");
    }
    let arms = spade::parse_arms("--train-arms", &args.train_arms)?;
    let (agent, agent_read) = spade::read_agent(&args.rollouts, Some(&arms))?;
    let (designer, designer_read) = if args.frozen_designer {
        (Vec::new(), Default::default())
    } else {
        spade::read_designer(&args.candidates, &args.scores, args.designer_group)?
    };
    let balance = Balance {
        agent_norm: args.agent_norm,
        designer_norm: args.designer_norm,
        designer_scale: args.designer_scale,
        designer_interval: args.designer_interval,
        designer_scale_max: args.designer_scale_max,
    };
    let batch = grpo::batch(agent, designer, &balance);

    if let Some(n) = args.model.threads {
        spade_model::options::set_threads(n);
    }
    let device = args.model.device()?;
    let model_path = args.model.model_path();
    let cfg = StepConfig {
        objective: Objective {
            eps_low: args.eps_low,
            eps_high: args.eps_high,
            dual_clip: args.dual_clip,
            tis_cap: args.tis_cap,
            kl_coef: args.kl_coef,
        },
        adamw: AdamW {
            lr: args.lr,
            beta1: args.beta1,
            beta2: args.beta2,
            eps: args.adam_eps,
            weight_decay: args.weight_decay,
            max_grad_norm: args.max_grad_norm,
        },
        loss_agg: args.loss_agg,
        micro_batch: args.micro_batch,
        mini_batches: args.mini_batches,
        checkpointing: !args.no_checkpointing,
        keep_activations_mib: args.keep_activations,
        supervised: false,
        share_prompts: !args.no_share_prompts,
    };
    let start = TrainerState::read(&model_path).with_context(|| format!("--model {}", model_path.display()))?;
    let staleness = spade_train::trainer::staleness(&batch.samples, start.step);
    let mut config = spade_cli::config_json(&args);
    if let Some(o) = config.as_object_mut() {
        o.insert("model".into(), model_path.display().to_string().into());
    }
    let mut data = vec![("rollouts", args.rollouts.join(" "))];
    if !args.frozen_designer && !args.candidates.is_empty() {
        data.push(("candidates", args.candidates.join(" ")));
        data.push(("scores", args.scores.join(" ")));
    }
    let step = GrpoStep {
        model: &model_path,
        start: &start,
        reference: args.ref_model.as_deref(),
        cfg: &cfg,
        output: &args.output,
        round: args.common.round,
        data,
        config: &config,
        diagnose: args.diagnostics,
    };
    let update = match &args.trainer {
        Some(command) => Update::External { command, threads: args.model.threads, device: &args.model.device },
        None => Update::Here(&device),
    };
    let Written { metrics: m, save_s } = step.run(&batch.samples, update)?;
    tracing::info!(
        step = m["step"].as_i64(),
        agent = m["agent"]["samples"].as_u64(),
        designer = m["designer"]["samples"].as_u64(),
        loss = m["loss"].as_f64(),
        grad_norm = m["grad_norm"].as_f64(),
        "wrote {}",
        args.output.display()
    );
    args.common.metrics(
        "spade-grpo-step",
        serde_json::json!({
            "model": model_path.display().to_string(),
            "output": args.output.display().to_string(),
            "policy_version": m["step"],
            "metrics": m,
            "groups": {"agent": batch.agent_groups, "designer": batch.designer_groups},
            "dropped_groups": batch.agent_groups.dropped_groups + batch.designer_groups.dropped_groups,
            "designer_scale": batch.designer_scale,
            "read": {"agent": agent_read, "designer": designer_read},
            "designer_staleness": staleness.map(|(mean, max)| serde_json::json!({"mean": mean, "max": max})),
            "save_s": save_s,
            "wall_s": t0.elapsed().as_secs_f64(),
            "config": config,
        }),
    )?;
    Ok(())
}
