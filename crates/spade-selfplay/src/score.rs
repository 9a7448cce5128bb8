//! One call of `spade-regret` as an algorithm over rows: new environments join the memory, this
//! call's episodes are recorded, the learning-potential trackers step, the memory is rescored and
//! relabelled, and every candidate (or, without candidates, every environment) gets a `scores` row.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Deserialize;
use spade_schema::{Arm, EnvRow, Label, RewardKind, RowError, ScoreRow, Status};

use crate::memory::{Entry, Memory, MemoryConfig};
use crate::reward::{Ema, Outcome, Plays, RewardConfig, Variant};

/// The columns of a `rollouts` row scoring reads (`success` and `status` may be absent).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Play {
    pub env_id: String,
    pub arm: Arm,
    pub r#return: Option<f64>,
    pub success: Option<bool>,
    pub status: Option<Status>,
    pub skill: Option<String>,
}

/// The columns of a `candidates` row scoring reads.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct CandidateIn {
    pub candidate_id: String,
    pub env_id: Option<String>,
    pub doc_id: Option<String>,
    pub skill: Option<String>,
    pub attempts: Option<i32>,
}

/// The columns of a `rejects` row scoring reads.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct RejectIn {
    pub candidate_id: String,
    pub validity: Option<f64>,
}

/// Which input list a [`RowError`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    Rollouts,
    Candidates,
}

/// The settings of one scoring call.
#[derive(Debug, Clone)]
pub struct Scoring {
    pub reward: RewardConfig,
    pub memory: MemoryConfig,
    /// The current round: plays are recorded at it, and the window ends at it.
    pub round: i64,
    /// Rounds of plays that score an environment (0 = every play).
    pub window: i64,
    /// A positive reward is scaled by this per repair turn.
    pub repair_discount: f64,
}

/// What a call produced besides the memory it updated.
#[derive(Debug, Clone, Default)]
pub struct Scored {
    pub rows: Vec<ScoreRow>,
    /// Environments played but neither given nor remembered: scored from this call's plays alone.
    pub orphans: usize,
    /// Environments evicted to keep the memory within its capacity.
    pub evicted: usize,
}

/// A positive reward scaled by `factor` per repair turn; penalties and zero unchanged.
fn discount(reward: f64, repairs: Option<i32>, factor: f64) -> f64 {
    match repairs {
        Some(n) if n > 0 && reward > 0.0 => reward * factor.powi(n),
        _ => reward,
    }
}

/// This call's episodes per environment: ids in first-seen order, their plays, and each one's skill.
type Aggregated = (Vec<String>, HashMap<String, Plays>, HashMap<String, String>);

fn aggregate(plays: &[Play]) -> Result<Aggregated, RowError> {
    let mut order = Vec::new();
    let mut out: HashMap<String, Plays> = HashMap::new();
    let mut skills = HashMap::new();
    for (i, row) in plays.iter().enumerate() {
        if !out.contains_key(&row.env_id) {
            order.push(row.env_id.clone());
        }
        if let Some(s) = &row.skill {
            skills.entry(row.env_id.clone()).or_insert(s.clone());
        }
        let p = out.entry(row.env_id.clone()).or_default();
        match row.status.unwrap_or_default() {
            Status::InfraError => continue, // the host's fault: recorded in the rollouts, no penalty, no play
            Status::Ok => {}
            _ => {
                p.failures += 1;
                continue;
            }
        }
        let r = row.r#return.ok_or_else(|| RowError::new(i, "return", "is null for an ok episode"))?;
        if !r.is_finite() {
            return Err(RowError::new(i, "return", format!("is {r}")));
        }
        let won = row.success.unwrap_or(r >= 0.5);
        match row.arm {
            Arm::Hint => p.hint.add(r, won),
            Arm::NoHint => p.nohint.add(r, won),
        }
    }
    Ok((order, out, skills))
}

/// Scores one call (see the module doc). `candidates` is `None` to score environments instead.
pub fn score(
    cfg: &Scoring,
    memory: &mut Memory,
    envs: &[EnvRow],
    plays: &[Play],
    candidates: Option<(&[CandidateIn], &[RejectIn])>,
) -> Result<Scored, (Input, RowError)> {
    let round = cfg.round;
    let rcfg = &cfg.reward;
    let starting_pool = plays.is_empty();

    // New environments enter the memory (a pool with no rollouts enters as seeds).
    let mut env_order: Vec<String> = Vec::new();
    let mut env_by_candidate: HashMap<String, String> = HashMap::new();
    for e in envs {
        if let Some(c) = &e.candidate_id {
            env_by_candidate.insert(c.clone(), e.env_id.clone());
        }
        env_order.push(e.env_id.clone());
        memory.add(Entry::new(e, round, if starting_pool { Label::Seed } else { Label::Unlabelled }));
    }

    // This call's plays join the accumulated ones.
    let (played_order, played, rollout_skills) = aggregate(plays).map_err(|e| (Input::Rollouts, e))?;
    let mut orphans: HashMap<String, Plays> = HashMap::new();
    for id in &played_order {
        if !memory.record(id, &played[id], round) {
            orphans.insert(id.clone(), played[id]);
        }
    }

    // Learning-potential trackers: updated once per call with the mean no-hint return of each skill's plays.
    let mut trackers = memory.trackers();
    if rcfg.variant == Variant::LearningPotential {
        let mut per_skill: BTreeMap<String, (f64, i64)> = BTreeMap::new();
        for id in &played_order {
            let skill = memory.get(id).and_then(|e| e.env.skill.clone()).or_else(|| rollout_skills.get(id).cloned());
            // This call's plays only: a round of several steps updates the trackers once per step.
            let (Some(skill), Some(p)) = (skill, played.get(id).copied()) else {
                continue;
            };
            let acc = per_skill.entry(skill).or_default();
            acc.0 += p.nohint.sum;
            acc.1 += p.nohint.plays;
        }
        for (skill, (sum, n)) in per_skill {
            if n > 0 {
                let s = trackers.get(&skill).copied();
                trackers.insert(skill, Ema::update(s, sum / n as f64, rcfg));
            }
        }
    }
    memory.rescore(rcfg, &trackers, round, cfg.window);
    memory.relabel(&cfg.memory, rcfg, round, cfg.window);

    let lp_of = |skill: &Option<String>| skill.as_ref().and_then(|s| trackers.get(s)).map(|t| t.slow);
    let score_env = |env_id: &str, skill: Option<String>| -> Option<(Plays, Outcome, Option<String>)> {
        let (p, sk) = match memory.get(env_id) {
            Some(e) => (e.current(round, cfg.window), e.env.skill.clone().or(skill)),
            None => (*orphans.get(env_id)?, skill.or_else(|| rollout_skills.get(env_id).cloned())),
        };
        let o = rcfg.score(&p, lp_of(&sk));
        Some((p, o, sk))
    };
    let scored = |base: ScoreRow, p: Plays, o: &Outcome| ScoreRow {
        plays_hint: p.hint.plays,
        plays_nohint: p.nohint.plays,
        failures: p.failures,
        hint_win_rate: o.hint_win_rate,
        nohint_win_rate: o.nohint_win_rate,
        regret: o.regret,
        ..base
    };

    let mut rows: Vec<ScoreRow> = Vec::new();
    if let Some((candidates, rejects)) = candidates {
        let rejects: HashMap<&str, Option<f64>> = rejects.iter().map(|r| (r.candidate_id.as_str(), r.validity)).collect();
        let mut seen = HashSet::new();
        for (i, c) in candidates.iter().enumerate() {
            let err = |column, msg: String| (Input::Candidates, RowError::new(i, column, msg));
            let cid = &c.candidate_id;
            if !seen.insert(cid.clone()) {
                return Err(err("candidate_id", format!("duplicate candidate `{cid}`")));
            }
            let env_id = env_by_candidate.get(cid).cloned().or_else(|| c.env_id.clone());
            let repairs = match c.attempts {
                Some(n) if n < 1 => return Err(err("attempts", format!("is {n}; a candidate takes at least one attempt"))),
                n => n.map(|n| n - 1),
            };
            let base = |valid, kind, designer_reward, validity| ScoreRow {
                candidate_id: Some(cid.clone()),
                env_id: env_id.clone(),
                doc_id: c.doc_id.clone(),
                skill: c.skill.clone(),
                round,
                valid,
                designer_reward,
                reward_kind: kind,
                validity,
                repairs,
                ..Default::default()
            };
            if let Some(validity) = rejects.get(cid.as_str()) {
                rows.push(base(false, RewardKind::Invalid, rcfg.invalid(*validity), *validity));
                continue;
            }
            match env_id.as_deref().and_then(|e| score_env(e, c.skill.clone())) {
                Some((p, o, sk)) => {
                    let row = scored(base(true, o.kind, discount(o.reward, repairs, cfg.repair_discount), None), p, &o);
                    rows.push(ScoreRow { skill: c.skill.clone().or(sk), ..row });
                }
                // A candidate with no environment that validate did not reject never produced code.
                None if env_id.is_none() => rows.push(base(false, RewardKind::Invalid, rcfg.invalid(Some(0.0)), Some(0.0))),
                None => rows.push(base(true, RewardKind::Unplayed, 0.0, None)),
            }
        }
    } else {
        let mut seen = HashSet::new();
        for id in env_order.iter().chain(&played_order).filter(|i| seen.insert(i.to_string())) {
            let (p, o, sk) = score_env(id, None).expect("environment is in the memory or the rollouts");
            let base = ScoreRow {
                candidate_id: memory.get(id).and_then(|e| e.env.candidate_id.clone()),
                env_id: Some(id.clone()),
                skill: sk,
                round,
                valid: true,
                designer_reward: o.reward,
                reward_kind: o.kind,
                ..Default::default()
            };
            rows.push(scored(base, p, &o));
        }
    }
    let evicted = memory.evict(cfg.memory.capacity);
    Ok(Scored { rows, orphans: orphans.len(), evicted })
}
