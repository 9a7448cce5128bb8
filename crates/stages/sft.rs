//! `spade-sft`: the designer warm-up — supervised fine-tuning on (designer prompt, environment +
//! hint) pairs, so a small model learns the environment format before self-play.
//!
//! The pool (`--pool`: folders of seed `.py` environments, `envs` or `memory` tables; several
//! grow it, e.g. with environments that passed `spade-validate` in earlier runs) and the documents
//! (`--docs`, a `docs` table) are split by id into training and held-out parts (`--held-out`,
//! hashed with `--split-seed`, by default `--seed`: an item's side never depends on the rest).
//! Every training environment is paired with `--per-env` training documents of its skill's domains
//! (`--favour`ed ones, e.g. the levels the agent can win, with `--favour-per-env`). The prompt of a pair is
//! rendered by the same function `spade-design` uses (document, skill, `--examples` memory
//! examples drawn from the other training environments — never the target itself), and the target
//! is the environment as one fenced Python block with its skill, setting and hint header, ending
//! with the end-of-turn token: the format `spade-design` parses. Held-out pairs (held-out
//! environments × held-out documents) are never trained on; their loss is reported before and
//! after. The checkpoint starts self-play fresh: step 0, no optimizer state, and itself as the KL
//! reference.
//!
//! Every update is a log line (when no progress bar is drawn) and a metrics line (`"event":
//! "update"`); every `--save-every` updates the trainer is saved to `OUTPUT.partial` with its
//! progress, and a later run with the same settings and data continues from there (`--fresh`
//! starts over; other settings are an error naming the first that differs).

#![forbid(unsafe_code)]

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use arrow::array::AsArray;
use clap::Parser;
use serde::Serialize;
use spade::envs::{read_design_memory, read_docs};
use spade_cli::Common;
use spade_design::prompt::{default_prompts_dir, Document, HintMode, PromptSpec, Templates};
use spade_design::{warmup, Setting};
use spade_io::{TableWriter, WriteMeta};
use spade_train::optim::Schedule;
use spade_train::sft::{self, SftConfig, SftProgress};
use spade_train::{Sample, Trainer};

const EXAMPLES: &str = "\
Examples:
  spade-sample-corpus data/corpus --n 1000 -o docs.parquet
  spade-sft --pool data/seed-envs --docs docs.parquet -o warm/checkpoint --held-out-docs warm/heldout-docs.parquet
  spade-sft --model warm/checkpoint --pool data/seed-envs runs/a/round-*/envs.parquet --docs docs.parquet -o warm2
  spade-sft --pool data/seed-envs --favour data/seed-envs/easy_*.py --favour-per-env 6 --per-env 1 ...   # the levels the agent wins, more often
  spade-sft ... -o warm/checkpoint --save-every 4 --stop-after 8   # 8 updates now; the same command continues";

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

    /// Environments to favour (in the forms of `--pool`, which they join when not in it), e.g. the
    /// levels the agent can win: each training one is paired with `--favour-per-env` documents.
    #[arg(long, value_name = "FILE|FOLDER", num_args = 1.., requires = "favour_per_env")]
    favour: Vec<String>,

    /// Training documents paired with each favoured training environment.
    #[arg(long, value_name = "N", requires = "favour")]
    favour_per_env: Option<usize>,

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
    /// sequences are long, so keeping them all takes ~0.8 MiB per token for the default model.
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

    /// Save the trainer (weights, optimizer moments, progress) to OUTPUT.partial every N updates;
    /// a later run with the same settings and data continues from it. 0: never.
    #[arg(long, default_value_t = 10, value_name = "N")]
    save_every: usize,

    /// Stop after N updates in this run, saving OUTPUT.partial (a time-boxed job: the same command
    /// continues); OUTPUT is written only when the last update is done.
    #[arg(long, value_name = "N")]
    stop_after: Option<usize>,

    /// Start over: remove OUTPUT.partial instead of continuing from it.
    #[arg(long)]
    fresh: bool,

    #[command(flatten)]
    common: Common,
}

fn main() -> ExitCode {
    spade_cli::main(|a: &Args| &a.common, run)
}

fn run(args: Args) -> anyhow::Result<()> {
    let t0 = Instant::now();
    anyhow::ensure!((0.0..1.0).contains(&args.held_out), "--held-out must be in [0, 1)");
    anyhow::ensure!(args.batch > 0 && args.micro_batch > 0, "--batch and --micro-batch must be ≥ 1");
    anyhow::ensure!((0.0..1.0).contains(&args.warmup), "--warmup must be in [0, 1)");
    anyhow::ensure!(args.stop_after != Some(0), "--stop-after must be ≥ 1");
    let setting: Setting = match args.setting.as_str() {
        "games" | "tool-use" => args.setting.parse().map_err(anyhow::Error::msg)?,
        _ => bail!("--setting must be games or tool-use"),
    };
    let pool = read_design_memory(&args.pool).with_context(|| format!("--pool {}", args.pool.join(" ")))?;
    let favoured = match args.favour.is_empty() {
        true => Vec::new(),
        false => warmup::pool_of(read_design_memory(&args.favour).with_context(|| format!("--favour {}", args.favour.join(" ")))?, setting),
    };
    if !args.favour.is_empty() && favoured.is_empty() {
        bail!("--favour holds no environment of the {} setting", args.setting);
    }
    let favoured_ids: std::collections::HashSet<String> = favoured.iter().map(|e| e.env_id.clone()).collect();
    let pool = warmup::pool_of(pool.into_iter().chain(favoured).collect(), setting);
    if pool.is_empty() {
        bail!("--pool holds no environment of the {} setting", args.setting);
    }
    let docs: Vec<Document> = read_docs(&args.docs)?;
    if docs.is_empty() {
        bail!("--docs holds no document");
    }
    let seed = args.common.seed;
    let sp = warmup::split(&pool, &docs, args.split_seed.unwrap_or(seed), args.held_out);
    if sp.train_envs.is_empty() || sp.train_docs.is_empty() {
        bail!("nothing left to train on after holding out {} of {} environments and {} documents", args.held_out, pool.len(), docs.len());
    }
    let per_env = |e: &spade_schema::MemoryRow| match args.favour_per_env {
        Some(n) if favoured_ids.contains(&e.env_id) => n,
        _ => args.per_env,
    };
    let train_pairs = warmup::pairs(&pool, &sp.train_envs, &docs, &sp.train_docs, per_env, seed);
    let held_pairs = warmup::pairs(&pool, &sp.held_out_envs, &docs, &sp.held_out_docs, |_| 1, seed);
    let favoured_train = sp.train_envs.iter().filter(|&&e| favoured_ids.contains(&pool[e].env_id)).count();
    let train_pair_ids: Vec<[String; 2]> = train_pairs.iter().map(|&(e, d)| [pool[e].env_id.clone(), docs[d].doc_id.clone()]).collect();

    let model_path = args.model.model_path();
    if let Some(n) = args.model.threads {
        spade_model::options::set_threads(n);
    }
    let device = args.model.device()?;
    let partial = partial_path(&args.output);
    let fingerprint = fingerprint(&args, &model_path, &train_pair_ids);
    let resume = if args.fresh {
        remove_partial(&partial)?;
        None
    } else {
        read_partial(&partial, &fingerprint)?
    };
    let mut trainer = match &resume {
        Some(p) => {
            tracing::info!("continuing the warm-up from {} ({} updates done; --fresh starts over)", partial.display(), p.updates_done);
            Trainer::open(&partial, &device).with_context(|| format!("{}", partial.display()))?
        }
        None => Trainer::open(&model_path, &device).with_context(|| format!("--model {}", model_path.display()))?,
    };
    let ctx = trainer.model.context_length();
    anyhow::ensure!(args.max_new_tokens + 16 < ctx, "--max-new-tokens {} leaves no room in the context of {ctx}", args.max_new_tokens);
    let templates = Templates::load(&args.prompts.clone().unwrap_or_else(default_prompts_dir))?;
    let spec = PromptSpec { setting, hint_mode: args.hint, examples: args.examples, negatives: 0 };
    let render = warmup::Render { model: &trainer.model, templates: &templates, spec: &spec, budget: ctx - args.max_new_tokens, seed };
    let samples = |pairs: &[(usize, usize)], exclude_target: bool| -> anyhow::Result<Vec<Sample>> {
        let seqs = warmup::sequences(&render, &pool, &sp.train_envs, &docs, pairs, exclude_target)?;
        Ok(seqs.into_iter().map(|(tokens, mask)| sft::sample(tokens, mask)).collect())
    };
    let train = samples(&train_pairs, true)?;
    let held = samples(&held_pairs, false)?;
    let longest = train.iter().map(|s| s.tokens.len()).max().unwrap_or(0);
    let favour_note = match args.favour_per_env {
        Some(n) => format!(", {favoured_train} of them favoured with {n}"),
        None => String::new(),
    };
    tracing::info!(
        "{} training pairs ({} environments × {} documents each{favour_note}, longest {longest} tokens), {} held-out pairs; {} epochs",
        train.len(),
        sp.train_envs.len(),
        args.per_env,
        held.len(),
        args.epochs
    );

    let cfg = SftConfig {
        epochs: args.epochs,
        batch: args.batch,
        micro_batch: args.micro_batch,
        lr: args.lr,
        lr_schedule: args.lr_schedule,
        warmup: args.warmup,
        weight_decay: args.weight_decay,
        max_grad_norm: args.max_grad_norm,
        keep_activations_mib: args.keep_activations,
    };
    let order = |epoch| warmup::epoch_order(seed, epoch, train.len());
    // Without a drawn bar (a log file) each update is a log line of its own, richer than the bar's.
    let own_lines = !args.common.draws_bar();
    let bar = |n| if own_lines { indicatif::ProgressBar::hidden() } else { args.common.progress(Some(n), "warm-up") };
    let first_update = resume.as_ref().map_or(0, |p| p.updates_done);
    let mut update_seconds = 0.0;
    let on_update = |trainer: &Trainer, p: &SftProgress, u: &sft::UpdateInfo| -> anyhow::Result<ControlFlow<()>> {
        let mut line = serde_json::to_value(u)?;
        if let Some(o) = line.as_object_mut() {
            o.insert("event".into(), "update".into());
            o.insert("train_seconds".into(), p.seconds.into());
        }
        args.common.metrics("spade-sft", line)?;
        let done_here = u.update - first_update;
        let stop = args.stop_after.is_some_and(|n| done_here >= n) && u.update < u.updates;
        if own_lines {
            update_seconds += u.seconds;
            let eta = update_seconds / done_here as f64 * (u.updates - u.update) as f64;
            tracing::info!(
                "update {}/{} (epoch {}): loss {:.4} per token, lr {:.2e}, {} target tokens in {:.0} s ({:.0} tokens/s), eta {:.0} min",
                u.update,
                u.updates,
                u.epoch,
                u.loss,
                u.lr,
                u.tokens,
                u.seconds,
                u.tokens as f64 / u.seconds.max(1e-9),
                eta / 60.0
            );
        }
        if u.update < u.updates && (stop || (args.save_every > 0 && u.update.is_multiple_of(args.save_every))) {
            let body = serde_json::to_vec_pretty(&serde_json::json!({"fingerprint": fingerprint, "progress": p}))?;
            trainer.save_with(&partial, None, &[(PROGRESS_FILE, &body)])?;
            tracing::debug!("saved {} after update {}", partial.display(), u.update);
        }
        Ok(if stop { ControlFlow::Break(()) } else { ControlFlow::Continue(()) })
    };
    let Some(report) = sft::train(&mut trainer, &train, &held, &cfg, order, resume, bar, on_update)? else {
        tracing::info!(
            "stopped after {} updates (--stop-after); the same command continues from {}",
            args.stop_after.unwrap_or(0),
            partial.display()
        );
        return Ok(());
    };
    let (held_before, held_after) = (report.held_out_before, report.held_out_after);

    // The checkpoint starts self-play afresh: step 0, no optimizer moments, itself the KL reference.
    std::fs::create_dir_all(args.output.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new(".")))?;
    let updates = sft::restart(&mut trainer, std::path::absolute(&args.output)?.display().to_string());
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
        data: [
            ("environments (the pool)", args.pool.join(" ")),
            ("favoured environments", args.favour.join(" ")),
            ("documents", args.docs.join(" ")),
        ]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .collect(),
        metrics: serde_json::json!({
            "train_pairs": train.len(), "held_out_pairs": held.len(), "updates": updates,
            "held_out_loss_before": held_before, "held_out_loss_after": held_after,
        }),
        config: config.clone(),
    });
    trainer.save(&args.output, Some(&card))?;
    remove_partial(&partial)?;

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
        let v = serde_json::to_value(sp.ids(&pool, &docs))?;
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
            "train_pair_ids": train_pair_ids,
            "train_envs": sp.train_envs.len(), "held_out_envs": sp.held_out_envs.len(), "favoured_train_envs": favoured_train,
            "train_docs": sp.train_docs.len(), "held_out_docs": sp.held_out_docs.len(),
            "epoch_loss": report.epoch_loss, "held_out_loss_before": held_before, "held_out_loss_after": held_after,
            "held_out_loss_by_epoch": report.held_out_by_epoch,
            "updates": updates, "continued_from_update": first_update, "train_seconds": report.seconds,
            "wall_s": t0.elapsed().as_secs_f64(), "config": config,
        }),
    )?;
    Ok(())
}

/// The progress file in `OUTPUT.partial`: the settings it was trained with, and where it stands.
const PROGRESS_FILE: &str = "sft_progress.json";

fn partial_path(output: &Path) -> PathBuf {
    let mut s = output.as_os_str().to_owned();
    s.push(".partial");
    PathBuf::from(s)
}

fn remove_partial(partial: &Path) -> anyhow::Result<()> {
    if partial.exists() {
        std::fs::remove_dir_all(partial).with_context(|| format!("{}: cannot remove", partial.display()))?;
    }
    Ok(())
}

/// What must match for a saved warm-up to be continued: everything that decides the updates.
fn fingerprint(args: &Args, model: &Path, train_pairs: &[[String; 2]]) -> serde_json::Value {
    serde_json::json!({
        "model": model.display().to_string(), "seed": args.common.seed, "split_seed": args.split_seed,
        "held_out": args.held_out, "per_env": args.per_env, "epochs": args.epochs, "batch": args.batch,
        "micro_batch": args.micro_batch, "lr": args.lr, "lr_schedule": args.lr_schedule, "warmup": args.warmup,
        "weight_decay": args.weight_decay, "max_grad_norm": args.max_grad_norm, "setting": args.setting,
        "hint": args.hint, "examples": args.examples, "max_new_tokens": args.max_new_tokens,
        "prompts": args.prompts, "train_pairs": train_pairs,
    })
}

/// The progress saved in `partial`, if there is one and it was trained with `fingerprint`'s
/// settings; an error naming the first setting that differs otherwise.
fn read_partial(partial: &Path, fingerprint: &serde_json::Value) -> anyhow::Result<Option<SftProgress>> {
    let path = partial.join(PROGRESS_FILE);
    if !partial.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path).with_context(|| format!("{}: cannot read (--fresh starts over)", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("{}: not JSON (--fresh starts over)", path.display()))?;
    let saved = &v["fingerprint"];
    if let (Some(a), Some(b)) = (saved.as_object(), fingerprint.as_object()) {
        if let Some(k) = b.keys().find(|k| a.get(*k) != b.get(*k)) {
            let show = |x: Option<&serde_json::Value>| match (k.as_str(), x) {
                ("train_pairs", _) => "other pairs".to_string(),
                (_, Some(x)) => x.to_string(),
                (_, None) => "nothing".to_string(),
            };
            bail!(
                "{}: a warm-up with other settings was saved here ({k}: {} there, {} now); --fresh starts over",
                path.display(),
                show(a.get(k)),
                show(b.get(k))
            );
        }
    } else {
        bail!("{}: field fingerprint: not an object (--fresh starts over)", path.display());
    }
    let p: SftProgress = serde_json::from_value(v["progress"].clone()).with_context(|| format!("{}: field progress", path.display()))?;
    Ok(Some(p))
}
