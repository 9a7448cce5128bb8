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

use std::collections::{BTreeMap, HashMap, HashSet};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context};
use arrow::array::{Array, ArrayRef, BooleanArray, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::DataType;
use clap::Parser;
use serde::Serialize;
use spade_cli::Common;
use spade_io::{Batch, TableReader, TableWriter, WriteMeta};
use spade_schema::SCORES;
use spade_selfplay::memory::Entry;
use spade_selfplay::reward::Ema;
use spade_selfplay::{stats, Memory, MemoryConfig, Plays, RewardConfig, Variant};

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

fn read(args: &[String]) -> anyhow::Result<Vec<Batch>> {
    if args.is_empty() {
        return Ok(Vec::new());
    }
    Ok(TableReader::open(args)?.read_all()?)
}

fn str_col(b: &Batch, name: &str) -> anyhow::Result<Option<StringArray>> {
    Ok(b.opt_column(name, &DataType::Utf8)?.map(|a| a.as_any().downcast_ref::<StringArray>().unwrap().clone()))
}

fn val(a: &Option<StringArray>, i: usize) -> Option<String> {
    a.as_ref().filter(|a| a.is_valid(i)).map(|a| a.value(i).to_string())
}

const INFRA: &str = "infra_error";

/// A positive reward scaled by `factor` per repair turn; penalties and zero unchanged.
fn discount(reward: f64, repairs: Option<i32>, factor: f64) -> f64 {
    match repairs {
        Some(n) if n > 0 && reward > 0.0 => reward * factor.powi(n),
        _ => reward,
    }
}

/// Aggregates this call's episodes per environment.
/// Environment ids in first-seen order, their plays, and each one's skill.
type Aggregated = (Vec<String>, HashMap<String, Plays>, HashMap<String, String>);

fn aggregate(batches: &[Batch]) -> anyhow::Result<Aggregated> {
    let mut order = Vec::new();
    let mut plays: HashMap<String, Plays> = HashMap::new();
    let mut skills = HashMap::new();
    for b in batches {
        let env = b.required("env_id", &DataType::Utf8)?;
        let env = env.as_any().downcast_ref::<StringArray>().unwrap();
        let arm = b.required("arm", &DataType::Utf8)?;
        let arm = arm.as_any().downcast_ref::<StringArray>().unwrap();
        let ret = b.column("return", &DataType::Float64)?;
        let ret = ret.as_any().downcast_ref::<Float64Array>().unwrap();
        let success = b.opt_column("success", &DataType::Boolean)?;
        let success = success.as_ref().map(|s| s.as_any().downcast_ref::<BooleanArray>().unwrap());
        let status = str_col(b, "status")?;
        let skill = str_col(b, "skill")?;
        for i in 0..b.num_rows() {
            let id = env.value(i).to_string();
            let st = val(&status, i).unwrap_or_else(|| "ok".into());
            if !plays.contains_key(&id) {
                order.push(id.clone());
            }
            if let Some(s) = val(&skill, i) {
                skills.entry(id.clone()).or_insert(s);
            }
            let p = plays.entry(id).or_default();
            if st == INFRA {
                continue; // the host's fault: recorded in the rollouts, no penalty, no play
            }
            if st != "ok" {
                p.failures += 1;
                continue;
            }
            if ret.is_null(i) {
                return Err(b.row_error(i, "return", "is null for an ok episode").into());
            }
            let r = ret.value(i);
            if !r.is_finite() {
                return Err(b.row_error(i, "return", format!("is {r}")).into());
            }
            let won = match success {
                Some(s) if s.is_valid(i) => s.value(i),
                _ => r >= 0.5,
            };
            match arm.value(i) {
                "hint" => p.hint.add(r, won),
                "nohint" => p.nohint.add(r, won),
                other => return Err(b.row_error(i, "arm", format!("`{other}` is neither `hint` nor `nohint`")).into()),
            }
        }
    }
    Ok((order, plays, skills))
}

struct Row {
    candidate_id: Option<String>,
    env_id: Option<String>,
    doc_id: Option<String>,
    skill: Option<String>,
    valid: bool,
    plays: Plays,
    hint_wr: Option<f64>,
    nohint_wr: Option<f64>,
    regret: Option<f64>,
    reward: f64,
    kind: String,
    validity: Option<f64>,
    repairs: Option<i32>,
}

fn scores_batch(rows: &[Row], round: i64) -> RecordBatch {
    let s = |f: &dyn Fn(&Row) -> Option<String>| -> ArrayRef { Arc::new(rows.iter().map(f).collect::<StringArray>()) };
    let i = |f: &dyn Fn(&Row) -> i64| -> ArrayRef { Arc::new(rows.iter().map(|r| Some(f(r))).collect::<Int64Array>()) };
    let fl = |f: &dyn Fn(&Row) -> Option<f64>| -> ArrayRef { Arc::new(rows.iter().map(f).collect::<Float64Array>()) };
    let cols: Vec<ArrayRef> = vec![
        s(&|r| r.candidate_id.clone()),
        s(&|r| r.env_id.clone()),
        s(&|r| r.doc_id.clone()),
        s(&|r| r.skill.clone()),
        i(&|_| round),
        Arc::new(rows.iter().map(|r| Some(r.valid)).collect::<BooleanArray>()),
        i(&|r| r.plays.hint.plays),
        i(&|r| r.plays.nohint.plays),
        i(&|r| r.plays.failures),
        fl(&|r| r.validity),
        fl(&|r| r.hint_wr),
        fl(&|r| r.nohint_wr),
        fl(&|r| r.regret),
        fl(&|r| Some(r.reward)),
        s(&|r| Some(r.kind.clone())),
        Arc::new(rows.iter().map(|r| r.repairs).collect::<Int32Array>()),
    ];
    RecordBatch::try_new(SCORES.schema(), cols).expect("scores columns follow the contract")
}

fn run(args: Args) -> anyhow::Result<()> {
    let start = Instant::now();
    let round = args.common.round as i64;
    let rcfg = RewardConfig {
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
    };
    let mcfg = MemoryConfig {
        capacity: args.capacity,
        seed_band: args.seed_band,
        too_easy: args.too_easy,
        too_hard: args.too_hard,
        seed_top: args.seed_top,
    };
    if args.rollouts.is_empty() && args.envs.is_empty() && args.memory.is_empty() {
        bail!("nothing to score: give rollouts, --envs or --memory");
    }
    let mut memory = Memory::from_batches(&read(&args.memory)?).context("reading --memory")?;
    let rollouts = read(&args.rollouts)?;
    let starting_pool = args.rollouts.is_empty();

    // New environments enter the memory (a pool with no rollouts enters as seeds).
    let mut env_order: Vec<String> = Vec::new();
    let mut env_by_candidate: HashMap<String, String> = HashMap::new();
    for b in read(&args.envs)? {
        let ids = b.required("env_id", &DataType::Utf8)?;
        let ids = ids.as_any().downcast_ref::<StringArray>().unwrap();
        let code = b.required("code", &DataType::Utf8)?;
        let code = code.as_any().downcast_ref::<StringArray>().unwrap();
        let (hint, skill, setting, cand) = (str_col(&b, "hint")?, str_col(&b, "skill")?, str_col(&b, "setting")?, str_col(&b, "candidate_id")?);
        for i in 0..b.num_rows() {
            let id = ids.value(i).to_string();
            if let Some(c) = val(&cand, i) {
                env_by_candidate.insert(c, id.clone());
            }
            env_order.push(id.clone());
            memory.add(Entry {
                env_id: id,
                code: code.value(i).to_string(),
                hint: val(&hint, i),
                skill: val(&skill, i),
                setting: val(&setting, i),
                candidate_id: val(&cand, i),
                first_round: round,
                last_round: round,
                plays: Plays::default(),
                history: Vec::new(),
                regret: None,
                nohint_win_rate: None,
                designer_reward: None,
                label: if starting_pool { "seed".into() } else { "none".into() },
                lp: None,
            });
        }
    }

    // This call's plays join the accumulated ones.
    let (played_order, plays, rollout_skills) = aggregate(&rollouts)?;
    let mut orphans: HashMap<String, Plays> = HashMap::new();
    for id in &played_order {
        if !memory.record(id, &plays[id], round) {
            orphans.insert(id.clone(), plays[id]);
        }
    }
    if !orphans.is_empty() {
        tracing::warn!(
            "{} environments in the rollouts are neither in --envs nor in --memory: scored from this call's plays alone, not remembered",
            orphans.len()
        );
    }

    // Learning-potential trackers: updated once per call with the mean no-hint return of each skill's plays.
    let mut trackers = memory.trackers();
    if rcfg.variant == Variant::LearningPotential {
        let mut per_skill: BTreeMap<String, (f64, i64)> = BTreeMap::new();
        for id in &played_order {
            let skill = memory.get(id).and_then(|e| e.skill.clone()).or_else(|| rollout_skills.get(id).cloned());
            // This call's plays only: a round of several steps updates the trackers once per step.
            let (Some(skill), Some(p)) = (skill, plays.get(id).copied()) else {
                continue;
            };
            let acc = per_skill.entry(skill).or_default();
            acc.0 += p.nohint.sum;
            acc.1 += p.nohint.plays;
        }
        for (skill, (sum, n)) in per_skill {
            if n > 0 {
                let s = trackers.get(&skill).copied();
                trackers.insert(skill, Ema::update(s, sum / n as f64, &rcfg));
            }
        }
    }
    memory.rescore(&rcfg, &trackers, round, args.window);
    memory.relabel(&mcfg, &rcfg, round, args.window);

    let lp_of = |skill: &Option<String>| skill.as_ref().and_then(|s| trackers.get(s)).map(|t| t.slow);
    let score_env = |env_id: &str, skill: Option<String>| -> Option<(Plays, spade_selfplay::Outcome, Option<String>)> {
        let (p, sk) = match memory.get(env_id) {
            Some(e) => (e.current(round, args.window), e.skill.clone().or(skill)),
            None => (*orphans.get(env_id)?, skill.or_else(|| rollout_skills.get(env_id).cloned())),
        };
        let o = rcfg.score(&p, lp_of(&sk));
        Some((p, o, sk))
    };

    let mut rows: Vec<Row> = Vec::new();
    if !args.candidates.is_empty() {
        let mut rejects: HashMap<String, Option<f64>> = HashMap::new();
        for b in read(&args.rejects)? {
            let c = b.required("candidate_id", &DataType::Utf8)?;
            let c = c.as_any().downcast_ref::<StringArray>().unwrap();
            let v = b.opt_column("validity", &DataType::Float64)?;
            let v = v.as_ref().map(|v| v.as_any().downcast_ref::<Float64Array>().unwrap());
            for i in 0..b.num_rows() {
                rejects.insert(c.value(i).to_string(), v.filter(|v| v.is_valid(i)).map(|v| v.value(i)));
            }
        }
        let mut seen = HashSet::new();
        for b in read(&args.candidates)? {
            let c = b.required("candidate_id", &DataType::Utf8)?;
            let c = c.as_any().downcast_ref::<StringArray>().unwrap();
            let (env, doc, skill) = (str_col(&b, "env_id")?, str_col(&b, "doc_id")?, str_col(&b, "skill")?);
            let attempts = b.opt_column("attempts", &DataType::Int32)?;
            let attempts = attempts.as_ref().map(|a| a.as_any().downcast_ref::<Int32Array>().unwrap());
            for i in 0..b.num_rows() {
                let cid = c.value(i).to_string();
                if !seen.insert(cid.clone()) {
                    return Err(b.row_error(i, "candidate_id", format!("duplicate candidate `{cid}`")).into());
                }
                let env_id = env_by_candidate.get(&cid).cloned().or_else(|| val(&env, i));
                let skill = val(&skill, i);
                let repairs = match attempts.filter(|a| a.is_valid(i)).map(|a| a.value(i)) {
                    Some(n) if n < 1 => return Err(b.row_error(i, "attempts", format!("is {n}; a candidate takes at least one attempt")).into()),
                    n => n.map(|n| n - 1),
                };
                let base = |valid, kind: &str, reward, validity| Row {
                    candidate_id: Some(cid.clone()),
                    env_id: env_id.clone(),
                    doc_id: val(&doc, i),
                    skill: skill.clone(),
                    valid,
                    plays: Plays::default(),
                    hint_wr: None,
                    nohint_wr: None,
                    regret: None,
                    reward,
                    kind: kind.into(),
                    validity,
                    repairs,
                };
                if let Some(validity) = rejects.get(&cid) {
                    rows.push(base(false, "invalid", rcfg.invalid(*validity), *validity));
                    continue;
                }
                let scored = env_id.as_deref().and_then(|e| score_env(e, skill.clone()));
                match scored {
                    Some((p, o, sk)) => rows.push(Row {
                        plays: p,
                        hint_wr: o.hint_win_rate,
                        nohint_wr: o.nohint_win_rate,
                        regret: o.regret,
                        skill: skill.clone().or(sk),
                        ..base(true, o.kind, discount(o.reward, repairs, args.repair_discount), None)
                    }),
                    // A candidate with no environment that validate did not reject never produced code.
                    None if env_id.is_none() => rows.push(base(false, "invalid", rcfg.invalid(Some(0.0)), Some(0.0))),
                    None => rows.push(base(true, "unplayed", 0.0, None)),
                }
            }
        }
    } else {
        let mut ids: Vec<String> = env_order.clone();
        ids.extend(played_order.iter().cloned());
        let mut seen = HashSet::new();
        for id in ids.into_iter().filter(|i| seen.insert(i.clone())) {
            let (p, o, sk) = score_env(&id, None).expect("environment is in the memory or the rollouts");
            let cand = memory.get(&id).and_then(|e| e.candidate_id.clone());
            rows.push(Row {
                candidate_id: cand,
                env_id: Some(id),
                doc_id: None,
                skill: sk,
                valid: true,
                plays: p,
                hint_wr: o.hint_win_rate,
                nohint_wr: o.nohint_win_rate,
                regret: o.regret,
                reward: o.reward,
                kind: o.kind.into(),
                validity: None,
                repairs: None,
            });
        }
    }
    let evicted = memory.evict(mcfg.capacity);

    let config = spade_cli::config_json(&args);
    let meta = |t: &str| WriteMeta { table: t.into(), seed: Some(args.common.seed), config: Some(config.clone()), tool: Some("spade-regret".into()) };
    let scores = scores_batch(&rows, round);
    let mut w = TableWriter::create(&args.output, scores.schema(), &meta("scores"))?;
    w.write(&scores)?;
    w.finish()?;
    let mem = memory.to_batch();
    let mut w = TableWriter::create(&args.memory_out, mem.schema(), &meta("memory"))?;
    w.write(&mem)?;
    w.finish()?;
    tracing::info!("scored {} rows into {}; memory of {} environments into {}", rows.len(), args.output, memory.len(), args.memory_out);

    // Metrics: distributions per arm and skill, validity, band share, diversity.
    let played: Vec<&Row> = rows.iter().filter(|r| r.plays.hint.plays + r.plays.nohint.plays > 0).collect();
    let dist = |f: &dyn Fn(&Row) -> Option<f64>, rs: &[&Row]| stats::summary(&rs.iter().filter_map(|r| f(r)).collect::<Vec<_>>());
    let mut per_skill = serde_json::Map::new();
    let skills: std::collections::BTreeSet<String> = played.iter().filter_map(|r| r.skill.clone()).collect();
    for s in skills {
        let rs: Vec<&Row> = played.iter().copied().filter(|r| r.skill.as_deref() == Some(&s)).collect();
        per_skill.insert(
            s,
            serde_json::json!({"regret": dist(&|r| r.regret, &rs), "hint_win_rate": dist(&|r| r.hint_wr, &rs), "nohint_win_rate": dist(&|r| r.nohint_wr, &rs)}),
        );
    }
    let in_band = played.iter().filter(|r| r.nohint_wr.map(|w| w >= rcfg.band.0 && w <= rcfg.band.1).unwrap_or(false)).count();
    let codes: Vec<&str> = memory.entries().iter().map(|e| e.code.as_str()).collect();
    let all: Vec<&Row> = rows.iter().collect();
    args.common.metrics(
        "spade-regret",
        serde_json::json!({
            "output": args.output,
            "variant": rcfg.variant.name(),
            "window": args.window,
            "rows": rows.len(),
            "episodes": rollouts.iter().map(|b| b.num_rows()).sum::<usize>(),
            "validity_rate": if rows.is_empty() { serde_json::Value::Null } else { (rows.iter().filter(|r| r.valid).count() as f64 / rows.len() as f64).into() },
            "repaired": rows.iter().filter(|r| r.repairs.unwrap_or(0) > 0).count(),
            "reward_kinds": rows.iter().fold(BTreeMap::<String, usize>::new(), |mut m, r| { *m.entry(r.kind.clone()).or_default() += 1; m }),
            "designer_reward": dist(&|r| Some(r.reward), &all),
            "regret": dist(&|r| r.regret, &played),
            "hint_win_rate": dist(&|r| r.hint_wr, &played),
            "nohint_win_rate": dist(&|r| r.nohint_wr, &played),
            "per_skill": per_skill,
            "in_band_share": if played.is_empty() { serde_json::Value::Null } else { (in_band as f64 / played.len() as f64).into() },
            "memory": {"size": memory.len(), "evicted": evicted, "labels": memory.label_counts(), "vendi_per_n": stats::vendi_per_n(&codes)},
            "seconds": start.elapsed().as_secs_f64(),
        }),
    )?;
    Ok(())
}
