//! `spade-sft`: the designer warm-up — supervised fine-tuning on (designer prompt, environment +
//! hint) pairs, so a small model learns the environment format before self-play.
//!
//! The pool (`--pool`: folders of seed `.py` environments, `envs` or `memory` tables; several
//! grow it, e.g. with environments that passed `spade-validate` in earlier runs) and the documents
//! (`--docs`, a `docs` table) are split by id into training and held-out parts (`--held-out`,
//! hashed with `--split-seed`, by default `--seed`: an item's side never depends on the rest).
//! Every training environment is paired with `--per-env` training documents of its skill's domains. The prompt of a pair is
//! rendered by the same function `spade-design` uses (document, skill, `--examples` memory
//! examples drawn from the other training environments — never the target itself), and the target
//! is the environment as one fenced Python block with its skill, setting and hint header, ending
//! with the end-of-turn token: the format `spade-design` parses. Held-out pairs (held-out
//! environments × held-out documents) are never trained on; their loss is reported before and
//! after. The checkpoint starts self-play fresh: step 0, no optimizer state, and itself as the KL
//! reference.

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use arrow::array::AsArray;
use clap::Parser;
use serde::Serialize;
use spade::envs::{read_design_memory, read_docs};
use spade_cli::Common;
use spade_design::memory::{set_env_ids, MemoryEntry};
use spade_design::prompt::{default_prompts_dir, Document, HintMode, PromptSpec, Templates};
use spade_design::warmup::{pairs, split, supervised_sequence, target_text};
use spade_io::{TableWriter, WriteMeta};
use spade_model::{Message, Model};
use spade_train::optim::Schedule;
use spade_train::{AdamW, LossAgg, Role, Sample, StepConfig, Trainer};

const EXAMPLES: &str = "\
Examples:
  spade-sample-corpus data/corpus --n 1000 -o docs.parquet
  spade-sft --pool data/seed-envs --docs docs.parquet -o warm/checkpoint --held-out-docs warm/heldout-docs.parquet
  spade-sft --model warm/checkpoint --pool data/seed-envs runs/a/round-*/envs.parquet --docs docs.parquet -o warm2";

/// The designer warm-up: supervised fine-tuning on (designer prompt, environment + hint) pairs.
#[derive(Debug, Parser, Serialize)]
#[command(name = "spade-sft", version, about, long_about = None, after_help = EXAMPLES)]
struct Args {
    #[command(flatten)]
    #[serde(skip)]
    model: spade_model::ModelArgs,

    /// Environments to learn from: seed folders, `envs` or `memory` tables (several grow the pool).
    #[arg(long, value_name = "FILE|FOLDER", num_args = 1.., required = true)]
    pool: Vec<String>,

    /// Documents (`docs` table: `doc_id`, `text`, `domain`).
    #[arg(long, value_name = "FILE", num_args = 1.., required = true)]
    docs: Vec<String>,

    /// Output checkpoint folder (written atomically).
    #[arg(short, long, value_name = "DIR")]
    output: PathBuf,

    /// Fraction of environments and of documents held out (never trained on).
    #[arg(long, default_value_t = 0.2)]
    held_out: f64,

    /// Write the held-out documents here (a `docs` table, for `spade-design` on unseen documents).
    #[arg(long, value_name = "FILE")]
    held_out_docs: Option<String>,

    /// Seed of the split [default: --seed]. A warm-up continued from its own checkpoint with a new
    /// `--seed` pairs fresh documents and shuffles anew, but keeps this seed so that its held-out
    /// items stay held out.
    #[arg(long)]
    split_seed: Option<u64>,

    /// Write the split (environment and document ids of each side) here as JSON.
    #[arg(long, value_name = "FILE")]
    split: Option<PathBuf>,

    /// Training documents paired with each training environment.
    #[arg(long, default_value_t = 2)]
    per_env: usize,

    /// Passes over the training pairs.
    #[arg(long, default_value_t = 2)]
    epochs: usize,

    /// Pairs per optimizer update.
    #[arg(long, default_value_t = 4)]
    batch: usize,

    /// Sequences per forward/backward.
    #[arg(long, default_value_t = 1)]
    micro_batch: usize,

    /// AdamW learning rate (the peak, with a schedule).
    #[arg(long, default_value_t = 1e-5)]
    lr: f64,

    /// Learning-rate schedule over all updates: constant, linear or cosine decay to 0.
    #[arg(long, value_enum, default_value = "cosine", value_name = "SCHEDULE")]
    lr_schedule: Schedule,

    /// Fraction of the updates spent warming the learning rate up from 0 (linearly).
    #[arg(long, default_value_t = 0.1, value_name = "F")]
    warmup: f64,

    /// MiB of block activations a forward may keep for its backward (as `spade-grpo-step`); the warm-up's
    /// sequences are long, so keeping them all takes ~2 MiB per token for the default model.
    #[arg(long, default_value_t = 4096, value_name = "MIB")]
    keep_activations: usize,

    /// AdamW weight decay.
    #[arg(long, default_value_t = 0.0)]
    weight_decay: f64,

    /// Gradient clipping by global norm (0 = off).
    #[arg(long, default_value_t = 1.0)]
    max_grad_norm: f64,

    /// Setting of the prompts (games or tool-use); pool environments of the other setting are left out.
    #[arg(long, default_value = "games")]
    setting: String,

    /// Hint mode of the prompts and targets: inline (the hint is part of the response) or self.
    #[arg(long, value_enum, default_value_t = HintMode::Inline)]
    hint: HintMode,

    /// Memory examples in each prompt (as `spade-design --examples`).
    #[arg(long, default_value_t = 1)]
    examples: usize,

    /// Tokens `spade-design` leaves for the response (the prompt is fitted to the rest, as there).
    #[arg(long, default_value_t = 2048)]
    max_new_tokens: usize,

    /// Folder of the prompt templates [default: data/prompts].
    #[arg(long, value_name = "DIR")]
    prompts: Option<PathBuf>,

    #[command(flatten)]
    common: Common,
}

fn main() -> ExitCode {
    spade_cli::main(|a: &Args| &a.common, run)
}

/// One supervised sequence as a trainer sample (the designer's role, advantage unused).
fn sample(model: &Model, prompt: &[Message], prompt_ids: &[u32], target: &str) -> anyhow::Result<Sample> {
    let (tokens, mask) = supervised_sequence(model, prompt, prompt_ids, target)?;
    let n = tokens.len();
    Ok(Sample {
        role: Role::Designer,
        tokens,
        mask,
        behaviour: vec![0.0; n],
        temperature: 1.0,
        reward: 0.0,
        group: String::new(),
        advantage: 0.0,
        policy_version: None,
    })
}

fn run(args: Args) -> anyhow::Result<()> {
    let t0 = Instant::now();
    anyhow::ensure!((0.0..1.0).contains(&args.held_out), "--held-out must be in [0, 1)");
    anyhow::ensure!(args.batch > 0 && args.micro_batch > 0, "--batch and --micro-batch must be ≥ 1");
    anyhow::ensure!((0.0..1.0).contains(&args.warmup), "--warmup must be in [0, 1)");
    if !matches!(args.setting.as_str(), "games" | "tool-use") {
        bail!("--setting must be games or tool-use");
    }
    let mut pool: Vec<MemoryEntry> = read_design_memory(&args.pool).with_context(|| format!("--pool {}", args.pool.join(" ")))?;
    set_env_ids(&mut pool, spade_sandbox::validate::env_id);
    pool.retain(|e| e.setting.as_deref().unwrap_or("games") == args.setting);
    // One copy of each environment (a grown pool may hold an environment twice).
    let mut seen = std::collections::HashSet::new();
    pool.retain(|e| seen.insert(e.env_id.clone()));
    if pool.is_empty() {
        bail!("--pool holds no environment of the {} setting", args.setting);
    }
    let docs: Vec<Document> = read_docs(&args.docs)?;
    if docs.is_empty() {
        bail!("--docs holds no document");
    }
    let seed = args.common.seed;
    let sp = split(&pool, &docs, args.split_seed.unwrap_or(seed), args.held_out);
    if sp.train_envs.is_empty() || sp.train_docs.is_empty() {
        bail!("nothing left to train on after holding out {} of {} environments and {} documents", args.held_out, pool.len(), docs.len());
    }
    let train_pairs = pairs(&pool, &sp.train_envs, &docs, &sp.train_docs, args.per_env, seed);
    let held_pairs = pairs(&pool, &sp.held_out_envs, &docs, &sp.held_out_docs, 1, seed);

    let model_path = args.model.model_path();
    if let Some(n) = args.model.threads {
        spade_model::options::set_threads(n);
    }
    let device = args.model.device()?;
    let mut trainer = Trainer::open(&model_path, &device).with_context(|| format!("--model {}", model_path.display()))?;
    let ctx = trainer.model.context_length();
    anyhow::ensure!(args.max_new_tokens + 16 < ctx, "--max-new-tokens {} leaves no room in the context of {ctx}", args.max_new_tokens);
    let budget = ctx - args.max_new_tokens;
    let templates = Templates::load(&args.prompts.clone().unwrap_or_else(default_prompts_dir))?;
    let spec = PromptSpec { setting: &args.setting, hint_mode: args.hint, examples: args.examples, negatives: 0 };
    let train_pool: Vec<MemoryEntry> = sp.train_envs.iter().map(|&i| pool[i].clone()).collect();
    let build = |pairs: &[(usize, usize)], exclude_target: bool| -> anyhow::Result<Vec<Sample>> {
        let mut out = Vec::with_capacity(pairs.len());
        for &(e, d) in pairs {
            let env = &pool[e];
            let memory: Vec<MemoryEntry> = train_pool.iter().filter(|m| !exclude_target || m.env_id != env.env_id).cloned().collect();
            let skill = env.skill.clone().unwrap_or_else(|| "unknown".into());
            let tie = format!("warmup/{seed}/{}/{}", env.env_id, docs[d].doc_id);
            let p = spade_design::group_prompt(&trainer.model, &templates, &spec, &memory, Some(&docs[d]), &skill, &tie, budget)
                .with_context(|| format!("prompt for environment {} and document {}", env.env_id, docs[d].doc_id))?;
            out.push(sample(&trainer.model, &p.messages, &p.ids, &target_text(env, args.hint))?);
        }
        Ok(out)
    };
    let train = build(&train_pairs, true)?;
    let held = build(&held_pairs, false)?;
    let longest = train.iter().map(|s| s.tokens.len()).max().unwrap_or(0);
    tracing::info!(
        "{} training pairs ({} environments × {} documents each, longest {longest} tokens), {} held-out pairs; {} epochs",
        train.len(),
        sp.train_envs.len(),
        args.per_env,
        held.len(),
        args.epochs
    );

    let (held_before, held_tokens) = spade_train::trainer::mean_nll(&trainer.model, &held, args.micro_batch)?;
    let mut cfg = StepConfig {
        adamw: AdamW { lr: args.lr, weight_decay: args.weight_decay, max_grad_norm: args.max_grad_norm, ..AdamW::default() },
        loss_agg: LossAgg::TokenMean,
        micro_batch: args.micro_batch,
        supervised: true,
        keep_activations_mib: args.keep_activations,
        ..StepConfig::default()
    };
    let updates_per_epoch = train.len().div_ceil(args.batch);
    let total_updates = updates_per_epoch * args.epochs;
    let warmup_updates = (args.warmup * total_updates as f64).round() as usize;
    let pb = args.common.progress(Some(total_updates as u64), "warm-up");
    let (mut epochs, mut held_by_epoch) = (Vec::new(), Vec::new());
    for epoch in 0..args.epochs {
        // A seeded order per epoch.
        let mut order: Vec<usize> = (0..train.len()).collect();
        order.sort_by_key(|&i| spade_design::hash_hex(&["warmup-order", &seed.to_string(), &epoch.to_string(), &i.to_string()]));
        let (mut loss, mut n) = (0.0, 0usize);
        for (u, chunk) in order.chunks(args.batch).enumerate() {
            let batch: Vec<Sample> = chunk.iter().map(|&i| train[i].clone()).collect();
            let update = epoch * updates_per_epoch + u;
            cfg.adamw.lr = args.lr_schedule.lr(args.lr, update, total_updates, warmup_updates);
            let m = trainer.step(&batch, &cfg, None)?;
            loss += m.loss * m.designer.tokens as f64;
            n += m.designer.tokens;
            pb.inc(1);
        }
        let mean = if n == 0 { 0.0 } else { loss / n as f64 };
        epochs.push(mean);
        // The held-out loss after every epoch (a few forward passes), to see where overfitting starts.
        let (h, _) = spade_train::trainer::mean_nll(&trainer.model, &held, args.micro_batch)?;
        pb.suspend(|| tracing::info!("epoch {}: training loss {mean:.4} per token, held-out {h:.4}", epoch + 1));
        held_by_epoch.push(h);
    }
    pb.finish_and_clear();
    let held_after = held_by_epoch.last().copied().unwrap_or(held_before);
    tracing::info!("held-out loss per token: {held_before:.4} before, {held_after:.4} after ({held_tokens} tokens)");

    // The checkpoint starts self-play afresh: step 0, no optimizer moments, itself the KL reference.
    let updates = trainer.state.step;
    trainer.opt = spade_train::optim::State::zeros(trainer.model.weights().named_vars());
    trainer.state.step = 0;
    trainer.state.optimizer_steps = 0;
    std::fs::create_dir_all(args.output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new(".")))?;
    let out_abs = std::path::absolute(&args.output)?;
    trainer.state.initial_model = out_abs.display().to_string();
    let mut config = spade_cli::config_json(&args);
    if let Some(o) = config.as_object_mut() {
        o.insert("model".into(), model_path.display().to_string().into());
        o.insert("warmup_updates".into(), updates.into());
    }
    trainer.state.last_config = Some(serde_json::json!({"warmup": config}));
    let card = spade_train::card::render(&spade_train::card::Card {
        stage: "spade-sft",
        model: &model_path.display().to_string(),
        initial_model: &trainer.state.initial_model,
        base: &model_path.display().to_string(),
        round: args.common.round,
        step: 0,
        data: vec![("environments (the pool)", args.pool.join(" ")), ("documents", args.docs.join(" "))],
        metrics: serde_json::json!({
            "train_pairs": train.len(), "held_out_pairs": held.len(), "updates": updates,
            "held_out_loss_before": held_before, "held_out_loss_after": held_after,
        }),
        config: config.clone(),
    });
    trainer.save(&args.output, Some(&card))?;

    if let Some(path) = &args.held_out_docs {
        // The input rows of the held-out documents, every column kept.
        let keep: std::collections::HashSet<&str> = sp.held_out_docs.iter().map(|&d| docs[d].doc_id.as_str()).collect();
        let reader = spade_io::TableReader::open(&args.docs)?;
        let meta = WriteMeta { table: "docs".into(), seed: Some(seed), config: None, tool: Some("spade-sft".into()) };
        let mut w = TableWriter::create(path, reader.schema(), &meta)?;
        for b in reader {
            let b = b?;
            let ids = b.required("doc_id", &arrow::datatypes::DataType::Utf8)?;
            let ids = ids.as_string::<i32>();
            let mask: arrow::array::BooleanArray = (0..b.num_rows()).map(|i| Some(keep.contains(ids.value(i)))).collect();
            w.write(&arrow::compute::filter_record_batch(&b.batch, &mask)?)?;
        }
        w.finish()?;
    }
    if let Some(path) = &args.split {
        let ids = |idx: &[usize], f: &dyn Fn(usize) -> String| idx.iter().map(|&i| f(i)).collect::<Vec<_>>();
        let env_id = |i: usize| pool[i].env_id.clone();
        let doc_id = |i: usize| docs[i].doc_id.clone();
        let v = serde_json::json!({
            "train_envs": ids(&sp.train_envs, &env_id), "held_out_envs": ids(&sp.held_out_envs, &env_id),
            "train_docs": ids(&sp.train_docs, &doc_id), "held_out_docs": ids(&sp.held_out_docs, &doc_id),
        });
        let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
        std::fs::write(&tmp, serde_json::to_string_pretty(&v)? + "\n").with_context(|| format!("{}: cannot write", tmp.display()))?;
        std::fs::rename(&tmp, path).with_context(|| format!("{}: cannot write", path.display()))?;
    }
    args.common.metrics(
        "spade-sft",
        serde_json::json!({
            "model": model_path.display().to_string(),
            "output": args.output.display().to_string(),
            "train_pairs": train.len(), "held_out_pairs": held.len(),
            "train_pair_ids": train_pairs.iter().map(|&(e, d)| [pool[e].env_id.clone(), docs[d].doc_id.clone()]).collect::<Vec<_>>(),
            "train_envs": sp.train_envs.len(), "held_out_envs": sp.held_out_envs.len(),
            "train_docs": sp.train_docs.len(), "held_out_docs": sp.held_out_docs.len(),
            "epoch_loss": epochs, "held_out_loss_before": held_before, "held_out_loss_after": held_after,
            "held_out_loss_by_epoch": held_by_epoch,
            "updates": updates, "wall_s": t0.elapsed().as_secs_f64(), "config": config,
        }),
    )?;
    Ok(())
}
