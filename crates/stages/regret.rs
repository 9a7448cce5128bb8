//! `spade-regret`: score environments and candidates by hint-based regret; update the memory.
//!
//! Reads rollouts (only `env_id`, `arm`, `return` required; `success`, `status` optional), adds
//! their plays to the environment memory (per round, and lifetime totals), scores every environment
//! from its plays inside `--window` rounds up to `--round` (the current agent; an environment not
//! played in the window keeps its last measurement), and writes one
//! `scores` row per candidate (valid or not, joined on `candidate_id`) — or per environment when no
//! candidates are given — plus the next memory. Raw designer rewards, not normalised (the trainer's
//! job). With no rollouts at all, `--envs` starts a memory whose environments are labelled `seed`.

#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Parser;
use serde::Serialize;
use spade_cli::Common;
use spade_io::{read_rows, write_batches, WriteMeta};
use spade_schema::{EnvRow, MemoryRow, ScoreRow, CANDIDATES, ENVS, MEMORY, REJECTS, ROLLOUTS, SCORES};
use spade_selfplay::{stats, CandidateIn, Input, Memory, MemoryConfig, Play, RejectIn, RewardConfig, Scoring, Variant};

const EXAMPLES: &str = "\
Examples:
  spade-regret rollouts.parquet --envs envs.parquet --candidates candidates.parquet \\
      --rejects rejects.parquet --memory memory.parquet -o scores.parquet --memory-out memory.next.parquet
  spade-regret --envs seed-envs.parquet -o seed-scores.jsonl --memory-out memory.parquet   # start a memory
  spade-regret 'step-*/rollouts.parquet' --memory memory.parquet -o - --memory-out memory.next.parquet";

/// Score environments and candidates by hint-based regret; update the environment memory.
#[derive(Debug, Parser, Serialize)]
#[command(name = "spade-regret", version, about, long_about = None, after_help = EXAMPLES)]
struct Args {
    /// Rollouts tables (shards, globs); none to start a memory from --envs.
    #[arg(value_name = "ROLLOUTS")]
    rollouts: Vec<String>,

    /// Validated environments (`env_id`, `code`; `hint`, `skill`, `setting`, `candidate_id` kept).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    envs: Vec<String>,

    /// Candidates to score, one `scores` row each (`candidate_id`; `env_id`, `doc_id`, `skill`, `code` used).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    candidates: Vec<String>,

    /// Rejected candidates (`candidate_id`, `validity`): penalised, graded by validity.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    rejects: Vec<String>,

    /// Current environment memory.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    memory: Vec<String>,

    /// Output `scores` table.
    #[arg(short, long, value_name = "FILE")]
    output: String,

    /// Output: the next memory.
    #[arg(long, value_name = "FILE")]
    memory_out: String,

    /// Designer reward: blend, solve-rate or learning-potential.
    #[arg(long, default_value = "blend")]
    variant: Variant,

    /// Weight of the floored, scaled regret term (blend).
    #[arg(long, default_value_t = 0.4)]
    regret_weight: f64,

    /// Weight of the difficulty anchor, the no-hint win-rate plateau (blend).
    #[arg(long, default_value_t = 0.6)]
    anchor_weight: f64,

    /// Regret at which the regret term saturates: clip(regret / scale, 0, 1).
    #[arg(long, default_value_t = 0.15)]
    regret_scale: f64,

    /// Band of no-hint win rate with full anchor credit, LO,HI.
    #[arg(long, default_value = "0.4,0.6", value_parser = spade_cli::parse_range)]
    band: (f64, f64),

    /// Width over which the anchor falls linearly to 0 outside the band.
    #[arg(long, default_value_t = 0.25)]
    ramp: f64,

    /// Reward of a candidate that failed validation, scaled by (1 − validity).
    #[arg(long, default_value_t = -1.0, allow_hyphen_values = true)]
    invalid_penalty: f64,

    /// Reward of an environment whose episodes failed in play (not infrastructure errors).
    #[arg(long, default_value_t = -0.5, allow_hyphen_values = true)]
    failure_penalty: f64,

    /// Reward of a hint leak: the hint arm always wins while the no-hint arm never does.
    #[arg(long, default_value_t = -0.5, allow_hyphen_values = true)]
    leak_penalty: f64,

    /// Plays per arm before a hint leak is called.
    #[arg(long, default_value_t = 2)]
    leak_min_plays: i64,

    /// learning-potential: weight of a new win rate in the fast EMA.
    #[arg(long, default_value_t = 0.98)]
    lp_fast: f64,

    /// learning-potential: weight of a new win rate in the slow EMA.
    #[arg(long, default_value_t = 0.85)]
    lp_slow: f64,

    /// Rounds of plays that score an environment and set its label: those of rounds
    /// `round − window + 1 ..= round` (1 = this round's plays, every step's; 0 = every play since
    /// the environment entered the memory). Delayed candidates are scored from the window at the
    /// round they are trained in.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(i64).range(0..))]
    window: i64,

    /// Factor applied to a valid candidate's positive reward per repair turn it needed (`attempts` − 1
    /// in the candidates table, `spade-design --repair`): the first response, which is what the
    /// designer is trained on, did not write that environment alone. 1 = full credit; penalties are
    /// never scaled.
    #[arg(long, default_value_t = 0.5, value_parser = unit_interval)]
    repair_discount: f64,

    /// Environments kept in the memory (oldest evicted first).
    #[arg(long, default_value_t = 200)]
    capacity: usize,

    /// No-hint win-rate band of seed candidates, LO,HI.
    #[arg(long, default_value = "0.15,0.85", value_parser = spade_cli::parse_range)]
    seed_band: (f64, f64),

    /// Seeds per skill (highest regret within the seed band).
    #[arg(long, default_value_t = 10)]
    seed_top: usize,

    /// No-hint win rate above which an environment is too easy.
    #[arg(long, default_value_t = 0.9)]
    too_easy: f64,

    /// No-hint win rate below which an environment is too hard.
    #[arg(long, default_value_t = 0.1)]
    too_hard: f64,

    #[command(flatten)]
    common: Common,
}

fn unit_interval(s: &str) -> Result<f64, String> {
    let x: f64 = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    if !(0.0..=1.0).contains(&x) {
        return Err(format!("`{s}` is not in [0, 1]"));
    }
    Ok(x)
}

fn main() -> ExitCode {
    spade_cli::main(|a: &Args| &a.common, run)
}

fn run(args: Args) -> anyhow::Result<()> {
    let start = Instant::now();
    let cfg = Scoring {
        reward: RewardConfig {
            variant: args.variant,
            regret_weight: args.regret_weight,
            anchor_weight: args.anchor_weight,
            regret_scale: args.regret_scale,
            band: args.band,
            ramp: args.ramp,
            invalid_penalty: args.invalid_penalty,
            failure_penalty: args.failure_penalty,
            leak_penalty: args.leak_penalty,
            leak_min_plays: args.leak_min_plays,
            lp_fast: args.lp_fast,
            lp_slow: args.lp_slow,
        },
        memory: MemoryConfig {
            capacity: args.capacity,
            seed_band: args.seed_band,
            too_easy: args.too_easy,
            too_hard: args.too_hard,
            seed_top: args.seed_top,
        },
        round: args.common.round as i64,
        window: args.window,
        repair_discount: args.repair_discount,
    };
    if args.rollouts.is_empty() && args.envs.is_empty() && args.memory.is_empty() {
        bail!("nothing to score: give rollouts, --envs or --memory");
    }
    let stored = read_rows::<MemoryRow, _>(&args.memory, &MEMORY).context("reading --memory")?;
    let mut memory = Memory::from_rows(stored.rows).map_err(|e| stored.origins.error(e)).context("reading --memory")?;
    let envs = read_rows::<EnvRow, _>(&args.envs, &ENVS)?;
    let plays = read_rows::<Play, _>(&args.rollouts, &ROLLOUTS)?;
    let candidates = read_rows::<CandidateIn, _>(&args.candidates, &CANDIDATES)?;
    let rejects = read_rows::<RejectIn, _>(if args.candidates.is_empty() { &[] } else { &args.rejects }, &REJECTS)?;
    let given = (!args.candidates.is_empty()).then_some((&candidates.rows[..], &rejects.rows[..]));
    let scored = spade_selfplay::score(&cfg, &mut memory, &envs.rows, &plays.rows, given).map_err(|(input, e)| match input {
        Input::Rollouts => plays.origins.error(e),
        Input::Candidates => candidates.origins.error(e),
    })?;
    if scored.orphans > 0 {
        tracing::warn!(
            "{} environments in the rollouts are neither in --envs nor in --memory: scored from this call's plays alone, not remembered",
            scored.orphans
        );
    }
    let rows = &scored.rows;

    let config = spade_cli::config_json(&args);
    let meta = |t: &str| WriteMeta { table: t.into(), seed: Some(args.common.seed), config: Some(config.clone()), tool: Some("spade-regret".into()) };
    write_batches(&args.output, SCORES.schema(), &[SCORES.batch(rows).map_err(anyhow::Error::msg)?], &meta("scores"))?;
    write_batches(&args.memory_out, MEMORY.schema(), &[MEMORY.batch(&memory.to_rows()).map_err(anyhow::Error::msg)?], &meta("memory"))?;
    tracing::info!("scored {} rows into {}; memory of {} environments into {}", rows.len(), args.output, memory.len(), args.memory_out);

    // Metrics: distributions per arm and skill, validity, band share, diversity.
    let played: Vec<&ScoreRow> = rows.iter().filter(|r| r.plays_hint + r.plays_nohint > 0).collect();
    let dist = |f: &dyn Fn(&ScoreRow) -> Option<f64>, rs: &[&ScoreRow]| stats::summary(&rs.iter().filter_map(|r| f(r)).collect::<Vec<_>>());
    let mut per_skill = serde_json::Map::new();
    let skills: std::collections::BTreeSet<String> = played.iter().filter_map(|r| r.skill.clone()).collect();
    for s in skills {
        let rs: Vec<&ScoreRow> = played.iter().copied().filter(|r| r.skill.as_deref() == Some(&s)).collect();
        per_skill.insert(
            s,
            serde_json::json!({"regret": dist(&|r| r.regret, &rs), "hint_win_rate": dist(&|r| r.hint_win_rate, &rs), "nohint_win_rate": dist(&|r| r.nohint_win_rate, &rs)}),
        );
    }
    let in_band = played.iter().filter(|r| r.nohint_win_rate.map(|w| w >= cfg.reward.band.0 && w <= cfg.reward.band.1).unwrap_or(false)).count();
    let codes: Vec<&str> = memory.entries().iter().map(|e| e.env.code.as_str()).collect();
    let all: Vec<&ScoreRow> = rows.iter().collect();
    args.common.metrics(
        "spade-regret",
        serde_json::json!({
            "output": args.output,
            "variant": cfg.reward.variant.name(),
            "window": args.window,
            "rows": rows.len(),
            "episodes": plays.rows.len(),
            "validity_rate": if rows.is_empty() { serde_json::Value::Null } else { (rows.iter().filter(|r| r.valid).count() as f64 / rows.len() as f64).into() },
            "repaired": rows.iter().filter(|r| r.repairs.unwrap_or(0) > 0).count(),
            "reward_kinds": rows.iter().fold(BTreeMap::<String, usize>::new(), |mut m, r| { *m.entry(r.reward_kind.to_string()).or_default() += 1; m }),
            "designer_reward": dist(&|r| Some(r.designer_reward), &all),
            "regret": dist(&|r| r.regret, &played),
            "hint_win_rate": dist(&|r| r.hint_win_rate, &played),
            "nohint_win_rate": dist(&|r| r.nohint_win_rate, &played),
            "per_skill": per_skill,
            "in_band_share": if played.is_empty() { serde_json::Value::Null } else { (in_band as f64 / played.len() as f64).into() },
            "memory": {"size": memory.len(), "evicted": scored.evicted, "labels": memory.label_counts(), "vendi_per_n": stats::vendi_per_n(&codes)},
            "seconds": start.elapsed().as_secs_f64(),
        }),
    )?;
    Ok(())
}
