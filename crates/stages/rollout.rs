//! `spade-rollout`: Play every environment of the active pool with and without the hint, kept as tokens end to end.
//!
//! The active pool is the `--envs` table (`env_id`, `code`; `hint`, `skill`, `setting` used) plus
//! up to `--pool P` environments of `--memory` (never labelled too-easy, too-hard, failing or leak;
//! drawn by `--pool-draw`, seeded by `--seed`, `--round` and `--step`); with no new environment, the
//! memory's alone. Every
//! environment is played `--group G` times per arm. An episode alternates the model's reply and an
//! environment step (in the sandbox) until the environment ends it, `--max-turns`, the context
//! length, or an environment failure. Replies of all live episodes are sampled in batches; the
//! sequence the model saw and produced is stored as tokens (`token_ids`), with the agent's own
//! tokens marked in `loss_mask` and their behaviour log-probs in `logprobs`. Episode seeds derive
//! from (`--seed`, `--round`, `--step`, `env_id`, arm, episode), so `--shard I/N` slices and batching
//! never change an episode. Prompt templates: `data/prompts/agent-*.j2` (built in; `--prompts DIR`
//! reads another copy).

#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Parser;
use serde::Serialize;
use spade_cli::{Common, Shard};
use spade_io::{TableReader, TableWriter, WriteMeta};
use spade_rollout::seed::env_hash;
use spade_rollout::{EnvSpec, EpisodeOutcome, ModelPolicy, PlayConfig, PoolDraw, Stamp, Templates};
use spade_sandbox::{Limits, Sandbox, SandboxConfig};
use spade_schema::ROLLOUTS;

const EXAMPLES: &str = "\
Examples:
  spade-rollout --model models/smollm2.gguf --envs envs.parquet --memory memory.parquet --pool 8 -o rollouts.parquet --group 4
  spade-rollout --envs envs.parquet -o - --arms nohint --group 2 --max-turns 4 --temperature 0
  spade-rollout --envs envs.parquet --memory memory.parquet -o rollouts.$SLURM_ARRAY_TASK_ID.parquet --shard $SLURM_ARRAY_TASK_ID/4";

/// Play every environment of the active pool with and without the hint, kept as tokens end to end.
#[derive(Debug, Parser, Serialize)]
#[command(name = "spade-rollout", version, about, long_about = None, after_help = EXAMPLES)]
struct Args {
    #[command(flatten)]
    #[serde(skip)]
    model: spade_model::ModelArgs,

    #[command(flatten)]
    #[serde(skip)]
    server: spade_model::ServerArgs,

    /// New environments (an `envs` table).
    #[arg(long, value_name = "FILE")]
    envs: Vec<String>,

    /// Environment memory, source of the rest of the active pool.
    #[arg(long, value_name = "FILE")]
    memory: Vec<String>,

    /// Environments taken from the memory besides the new ones.
    #[arg(long, default_value_t = 8)]
    pool: usize,

    /// How the memory's environments are chosen (never too-easy, too-hard, failing or leak but
    /// for `draw`): `weighted` (self-play: a seeded draw without replacement, each environment
    /// weighted by p(1-p), p its no-hint win rate with a win and a loss added: 0.25 unplayed,
    /// towards 0 where the agent always or never wins), `uniform` (the same draw, equal weights),
    /// `recent` (most recently seen first) or `draw` (the fixed-pool baseline: each --round takes
    /// the next --pool environments of the whole memory in a seeded order, none again until all
    /// have been played).
    #[arg(long, value_enum, default_value_t = PoolChoice::Weighted)]
    pool_draw: PoolChoice,

    /// Take as many memory environments as this rollouts (or envs) table has distinct `env_id`s,
    /// instead of --pool: the baseline plays as many environments as the run it is compared with.
    #[arg(long, value_name = "FILE")]
    pool_like: Vec<String>,

    /// Output `rollouts` table.
    #[arg(short, long, value_name = "FILE")]
    output: String,

    /// Episodes per environment and arm.
    #[arg(long, default_value_t = 4)]
    group: usize,

    /// Arms to play.
    #[arg(long, default_value = "hint,nohint")]
    arms: String,

    /// Turn limit per episode.
    #[arg(long, default_value_t = 8)]
    max_turns: usize,

    /// Tokens the agent may sample per turn (the context length bounds the whole episode).
    #[arg(long, default_value_t = 256)]
    max_new_tokens: usize,

    /// Nucleus sampling mass (1 = off); log-probs are recorded before truncation.
    #[arg(long, default_value_t = 1.0)]
    top_p: f32,

    /// Sample among the k most likely tokens (0 = off).
    #[arg(long, default_value_t = 0)]
    top_k: usize,

    /// Sequences decoding at once (slots); one that finishes hands its slot to the next waiting
    /// prompt (`--batch` is an alias)
    #[arg(long = "slots", visible_alias = "batch", default_value_t = 32, value_name = "N")]
    batch: usize,

    /// Episodes live at once (their replies are sampled together).
    #[arg(long, default_value_t = 256)]
    concurrency: usize,

    /// Sandbox worker processes (fork servers) running the environments.
    #[arg(long, default_value_t = 2)]
    jobs: usize,

    /// Threads making environment calls.
    #[arg(long, default_value_t = 8)]
    env_threads: usize,

    /// Seconds one reset or step may take before the episode fails with `timeout`.
    #[arg(long, default_value_t = 5.0)]
    call_timeout: f64,

    /// Folder with the agent's prompt templates (agent-system-games.j2, agent-system-tool-use.j2,
    /// agent-first-observation.j2) [default: the built-in copies of data/prompts/]
    #[arg(long, value_name = "DIR")]
    prompts: Option<std::path::PathBuf>,

    /// Agent step within the round.
    #[arg(long, default_value_t = 0)]
    step: u64,

    /// Play a deterministic 1/N slice of the environments (I from 0, as Slurm array indices).
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,

    #[command(flatten)]
    common: Common,
}

/// How the memory's share of the active pool is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
enum PoolChoice {
    Weighted,
    Uniform,
    Recent,
    Draw,
}

fn main() -> ExitCode {
    spade_cli::main(|a: &Args| &a.common, run)
}

/// Distinct `env_id`s of a table (a matched run's rollouts).
fn distinct_env_ids(paths: &[String]) -> anyhow::Result<usize> {
    #[derive(serde::Deserialize)]
    struct Played {
        env_id: String,
    }
    let mut ids = std::collections::HashSet::new();
    for b in TableReader::open(paths)?.read_all()? {
        ids.extend(b.rows::<Played>(&ROLLOUTS)?.into_iter().map(|p| p.env_id));
    }
    Ok(ids.len())
}

fn run(args: Args) -> anyhow::Result<()> {
    let start = Instant::now();
    let arms = spade::parse_arms("--arms", &args.arms)?;
    let shard: Option<Shard> = args.shard;
    if args.envs.is_empty() && args.memory.is_empty() {
        bail!("nothing to play: give --envs and/or --memory");
    }
    if args.max_turns == 0 || args.max_new_tokens == 0 || args.group == 0 {
        bail!("--max-turns, --max-new-tokens and --group must be at least 1");
    }
    if !(args.call_timeout > 0.0) {
        bail!("--call-timeout must be positive");
    }
    let templates = Templates::from_dir_or_builtin(args.prompts.as_deref())?;

    // The active pool, then this shard's slice of it.
    let new = spade::envs::read_envs(&args.envs)?;
    let memory = spade::envs::read_memory(&args.memory)?;
    let (n_new, n_memory) = (new.len(), memory.len());
    let want = if args.pool_like.is_empty() { args.pool } else { distinct_env_ids(&args.pool_like)? };
    let draw = match args.pool_draw {
        PoolChoice::Recent => PoolDraw::Recent,
        PoolChoice::Draw => PoolDraw::Draw,
        PoolChoice::Weighted => PoolDraw::Weighted,
        PoolChoice::Uniform => PoolDraw::Uniform,
    };
    let mut pool = spade_rollout::choose_pool(new, memory, want, draw, args.common.seed, args.common.round, args.step);
    let pool_size = pool.len();
    if let Some(s) = shard {
        pool.retain(|e| s.owns(env_hash(&e.env_id)));
    }
    tracing::info!(
        "active pool: {pool_size} environments ({n_new} new rows, {n_memory} in the memory); playing {}{}",
        pool.len(),
        shard.map(|s| format!(" in shard {}/{}", s.index, s.count)).unwrap_or_default()
    );

    let (seed, round, step) = (args.common.seed, args.common.round, args.step);
    let specs = spade_rollout::episode_specs(&pool, &arms, args.group as u32, seed, round, step);

    let model_path = args.model.model_path();
    let policy_version = spade_model::checkpoint::policy_version(&model_path)?;
    let mut config = spade_cli::config_json(&args);
    args.model.record_sampling(&mut config);
    args.server.record(&mut config);
    let meta = WriteMeta { table: ROLLOUTS.name.into(), seed: Some(seed), config: Some(config.clone()), tool: Some("spade-rollout".into()) };
    let stamp = Stamp { policy_version, round: round as i64, step: step as i32, temperature: args.model.temperature };

    let mut outcomes = Vec::new();
    let mut stats = spade_rollout::PlayStats::default();
    if !specs.is_empty() {
        let generator = args.model.load_generator(&args.server).with_context(|| format!("loading model {}", model_path.display()))?;
        let policy = ModelPolicy { model: &*generator, params: args.model.sampling(args.top_p, args.top_k, args.max_new_tokens, args.batch) };
        let limits = Limits { call_timeout: std::time::Duration::from_secs_f64(args.call_timeout), ..Limits::default() };
        let cfg = spade::foreign::sandbox_for(
            pool.iter().map(|e| e.code.as_str()),
            SandboxConfig { jobs: args.jobs.max(1), limits, ..Default::default() },
        )?;
        let sandbox = Sandbox::new(cfg).context("starting the sandbox")?;
        let play = PlayConfig {
            max_turns: args.max_turns as u32,
            max_new_tokens: args.max_new_tokens,
            concurrency: args.concurrency.max(1),
            env_threads: args.env_threads.max(1),
            templates,
        };
        let pb = args.common.progress(Some(specs.len() as u64), "episodes");
        let mut finished = Vec::new();
        let played = spade_rollout::play(&pool, &specs, &policy, &sandbox, &play, &mut |o| {
            pb.inc(1);
            finished.push(o.clone());
        });
        pb.finish_and_clear();
        if let Some(stats) = generator.engine_stats() {
            tracing::info!("{stats}");
        }
        match played {
            Ok((o, s)) => {
                outcomes = o;
                stats = s;
            }
            Err(e) => {
                // Keep what was played: the finished episodes go beside the output.
                let Some(path) = spade_io::partial_path(&args.output).filter(|_| !finished.is_empty()) else {
                    return Err(e.into());
                };
                let n = write_rows(&path, &finished, &pool, &stamp, &meta)?;
                bail!("{e} ({n} finished episodes kept in {path})");
            }
        }
    }

    let n = write_rows(&args.output, &outcomes, &pool, &stamp, &meta)?;
    // A partial file from an earlier failed run of this output is superseded.
    if let Some(p) = spade_io::partial_path(&args.output) {
        let _ = std::fs::remove_file(p);
    }

    let summary = spade_rollout::outcome_summary(&outcomes, &arms);
    let secs = start.elapsed().as_secs_f64();
    tracing::info!(
        "{n} episodes of {} environments into {} ({:.1} episodes/min, {:.1} generated tokens/s, statuses {})",
        pool.len(),
        args.output,
        n as f64 / secs * 60.0,
        stats.generated_tokens as f64 / stats.wall_secs.max(1e-9),
        summary["statuses"]
    );
    args.common.metrics(
        "spade-rollout",
        serde_json::json!({
            "episodes": n,
            "environments": pool.len(),
            "pool": pool_size,
            "arms": summary["arms"],
            "statuses": summary["statuses"],
            "play": stats,
            "episodes_per_min": n as f64 / secs * 60.0,
            "seconds": secs,
            "policy_version": policy_version,
            "config": config,
        }),
    )?;
    Ok(())
}

/// Write episode rows to `path` (atomically); returns the row count.
fn write_rows(path: &str, outcomes: &[EpisodeOutcome], pool: &[EnvSpec], stamp: &Stamp, meta: &WriteMeta) -> anyhow::Result<usize> {
    let mut w = TableWriter::create(path, ROLLOUTS.schema(), meta)?;
    for chunk in outcomes.chunks(256) {
        let rows: Vec<_> = chunk.iter().map(|o| o.row(pool[o.spec.env].skill.clone(), stamp)).collect();
        w.write(&ROLLOUTS.batch(&rows).map_err(anyhow::Error::msg)?)?;
    }
    w.finish().with_context(|| format!("writing {path}"))
}
