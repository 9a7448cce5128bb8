//! The environment memory: every environment with its code, hint and skill, its plays per arm and
//! round (and their lifetime totals), latest scores and a label recomputed every round.
//!
//! Scores and labels measure the current agent: they come from the plays of a recent window of
//! rounds (`window` rounds up to the current one, every step of each; 0 = every play since the
//! environment entered the memory). An environment not played inside the window keeps its last
//! measurement: the window that ended at the last round it was played in (as the reference keeps the
//! score an environment got when it was last played).
//! Lifetime totals are kept for reporting.
//!
//! Labels: `failing` (an episode failed through the environment), `leak` (hint arm always wins,
//! no-hint never does), `too-easy` / `too-hard` (no-hint win rate above 0.9 / below 0.1), `seed` (top
//! regret per skill among environments whose no-hint win rate is inside [0.15, 0.85]; unplayed
//! environments that arrived as a seed pool keep `seed`), else `none`. Size is bounded: the oldest
//! entries (first added) are evicted first, as the reference's FIFO of 200.

use std::collections::HashMap;

use serde::Serialize;
use spade_schema::{EnvRow, Label, MemoryRow, RowError};

use crate::reward::{ArmPlays, Ema, Plays, RewardConfig};

#[derive(Debug, Clone, Serialize)]
pub struct MemoryConfig {
    pub capacity: usize,
    pub seed_band: (f64, f64),
    pub too_easy: f64,
    pub too_hard: f64,
    /// Seeds per skill.
    pub seed_top: usize,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig { capacity: 200, seed_band: (0.15, 0.85), too_easy: 0.9, too_hard: 0.1, seed_top: 10 }
    }
}

/// One environment of the memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The environment: id, code, hint, skill, setting, the candidate it came from, its solver.
    pub env: EnvRow,
    pub first_round: i64,
    pub last_round: i64,
    /// Lifetime totals of every play.
    pub plays: Plays,
    /// Plays per round, ascending by round (the `history` column).
    pub history: Vec<(i64, Plays)>,
    pub regret: Option<f64>,
    pub nohint_win_rate: Option<f64>,
    pub designer_reward: Option<f64>,
    pub label: Label,
    pub lp: Option<Ema>,
}

impl Entry {
    /// An environment entering the memory at `round`, unplayed and unscored.
    pub fn new(env: &EnvRow, round: i64, label: Label) -> Entry {
        Entry {
            env: EnvRow { source: None, ..env.clone() },
            first_round: round,
            last_round: round,
            plays: Plays::default(),
            history: Vec::new(),
            regret: None,
            nohint_win_rate: None,
            designer_reward: None,
            label,
            lp: None,
        }
    }
}

/// The memory, in insertion order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Memory {
    entries: Vec<Entry>,
    index: HashMap<String, usize>,
}

fn arm_json(a: &ArmPlays) -> serde_json::Value {
    serde_json::json!([a.plays, a.sum, a.wins])
}

/// The `history` column: `[{"round": r, "hint": [plays, sum, wins], "nohint": [...], "failures": n}, ...]`.
fn history_json(h: &[(i64, Plays)]) -> String {
    let v: Vec<serde_json::Value> = h
        .iter()
        .map(|(r, p)| serde_json::json!({"round": r, "hint": arm_json(&p.hint), "nohint": arm_json(&p.nohint), "failures": p.failures}))
        .collect();
    serde_json::Value::Array(v).to_string()
}

fn parse_history(s: &str) -> Result<Vec<(i64, Plays)>, String> {
    let v: serde_json::Value = serde_json::from_str(s).map_err(|e| format!("is not JSON ({e})"))?;
    let rows = v.as_array().ok_or("is not a JSON list")?;
    let arm = |x: &serde_json::Value| -> Option<ArmPlays> {
        let a = x.as_array().filter(|a| a.len() == 3)?;
        Some(ArmPlays { plays: a[0].as_i64()?, sum: a[1].as_f64()?, wins: a[2].as_i64()? })
    };
    let mut out: Vec<(i64, Plays)> = Vec::new();
    for r in rows {
        let round = r["round"].as_i64().ok_or("has an entry without an integer `round`")?;
        let hint = arm(&r["hint"]).ok_or("has an entry whose `hint` is not [plays, sum, wins]")?;
        let nohint = arm(&r["nohint"]).ok_or("has an entry whose `nohint` is not [plays, sum, wins]")?;
        let failures = r["failures"].as_i64().ok_or("has an entry without integer `failures`")?;
        if out.last().is_some_and(|(last, _)| *last >= round) {
            return Err("is not in ascending round order".into());
        }
        out.push((round, Plays { hint, nohint, failures }));
    }
    Ok(out)
}

impl Entry {
    /// The plays that measure the current agent: those of rounds `round - window + 1 ..= round`
    /// (every play with `window` 0); without any, the window that ended at the last round it was
    /// played in (its last measurement). An entry without a history (a memory written before the
    /// `history` column) has only its lifetime totals.
    pub fn current(&self, round: i64, window: i64) -> Plays {
        if window <= 0 || self.history.is_empty() {
            return self.plays;
        }
        let sum = |end: i64| {
            let mut p = Plays::default();
            for (_, q) in self.history.iter().filter(|(r, _)| *r > end - window && *r <= end) {
                p.merge(q);
            }
            p
        };
        let p = sum(round);
        if p.played() {
            return p;
        }
        match self.history.iter().rev().find(|(r, q)| *r <= round && q.played()) {
            Some((last, _)) => sum(*last),
            None => p,
        }
    }
}

impl Memory {
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn get(&self, env_id: &str) -> Option<&Entry> {
        self.index.get(env_id).map(|&i| &self.entries[i])
    }

    pub fn get_mut(&mut self, env_id: &str) -> Option<&mut Entry> {
        self.index.get(env_id).map(|&i| &mut self.entries[i])
    }

    fn reindex(&mut self) {
        self.index = self.entries.iter().enumerate().map(|(i, e)| (e.env.env_id.clone(), i)).collect();
    }

    /// The memory of a `memory` table's rows; a duplicate environment or an unreadable `history` is
    /// an error about its row.
    pub fn from_rows(rows: Vec<MemoryRow>) -> Result<Memory, RowError> {
        let mut m = Memory::default();
        for (i, r) in rows.into_iter().enumerate() {
            let e = Entry {
                history: match &r.history {
                    Some(h) => parse_history(h).map_err(|m| RowError::new(i, "history", m))?,
                    None => Vec::new(),
                },
                plays: Plays {
                    hint: ArmPlays { plays: r.plays_hint, sum: r.sum_hint, wins: r.wins_hint },
                    nohint: ArmPlays { plays: r.plays_nohint, sum: r.sum_nohint, wins: r.wins_nohint },
                    failures: r.failures,
                },
                lp: match (r.lp_fast, r.lp_slow) {
                    (Some(fast), Some(slow)) => Some(Ema { fast, slow }),
                    _ => None,
                },
                env: EnvRow {
                    env_id: r.env_id,
                    code: r.code,
                    hint: r.hint,
                    skill: r.skill,
                    setting: r.setting,
                    candidate_id: r.candidate_id,
                    source: None,
                    solver: r.solver,
                },
                first_round: r.first_round,
                last_round: r.last_round,
                regret: r.regret,
                nohint_win_rate: r.nohint_win_rate,
                designer_reward: r.designer_reward,
                label: r.label,
            };
            if m.index.contains_key(&e.env.env_id) {
                return Err(RowError::new(i, "env_id", format!("duplicate environment `{}` in the memory", e.env.env_id)));
            }
            m.index.insert(e.env.env_id.clone(), m.entries.len());
            m.entries.push(e);
        }
        Ok(m)
    }

    /// The memory as `memory` rows.
    pub fn to_rows(&self) -> Vec<MemoryRow> {
        self.entries
            .iter()
            .map(|x| MemoryRow {
                env_id: x.env.env_id.clone(),
                code: x.env.code.clone(),
                hint: x.env.hint.clone(),
                skill: x.env.skill.clone(),
                setting: x.env.setting,
                candidate_id: x.env.candidate_id.clone(),
                first_round: x.first_round,
                last_round: x.last_round,
                plays_hint: x.plays.hint.plays,
                sum_hint: x.plays.hint.sum,
                plays_nohint: x.plays.nohint.plays,
                sum_nohint: x.plays.nohint.sum,
                wins_hint: x.plays.hint.wins,
                wins_nohint: x.plays.nohint.wins,
                failures: x.plays.failures,
                regret: x.regret,
                nohint_win_rate: x.nohint_win_rate,
                designer_reward: x.designer_reward,
                label: x.label,
                lp_fast: x.lp.map(|l| l.fast),
                lp_slow: x.lp.map(|l| l.slow),
                history: Some(history_json(&x.history)),
                solver: x.env.solver.clone(),
            })
            .collect()
    }

    /// Adds an environment not yet in the memory; returns whether it was new.
    pub fn add(&mut self, e: Entry) -> bool {
        if self.index.contains_key(&e.env.env_id) {
            return false;
        }
        self.index.insert(e.env.env_id.clone(), self.entries.len());
        self.entries.push(e);
        true
    }

    /// Adds this call's plays of an environment to its lifetime totals and to its plays of `round`,
    /// stamping `round` as last seen.
    pub fn record(&mut self, env_id: &str, plays: &Plays, round: i64) -> bool {
        match self.get_mut(env_id) {
            Some(e) => {
                e.plays.merge(plays);
                e.last_round = e.last_round.max(round);
                if !plays.played() {
                    return true; // infrastructure errors only: no play to remember
                }
                match e.history.binary_search_by_key(&round, |(r, _)| *r) {
                    Ok(k) => e.history[k].1.merge(plays),
                    Err(k) => e.history.insert(k, (round, *plays)),
                }
                true
            }
            None => false,
        }
    }

    /// The skills' learning-potential trackers, as stored on their rows.
    pub fn trackers(&self) -> HashMap<String, Ema> {
        let mut t: HashMap<String, (i64, Ema)> = HashMap::new();
        for e in &self.entries {
            if let (Some(s), Some(lp)) = (&e.env.skill, e.lp) {
                let cur = t.entry(s.clone()).or_insert((e.last_round, lp));
                if e.last_round > cur.0 {
                    *cur = (e.last_round, lp);
                }
            }
        }
        t.into_iter().map(|(k, (_, v))| (k, v)).collect()
    }

    /// Recomputes every entry's scores from its plays in the window (see the module doc).
    pub fn rescore(&mut self, cfg: &RewardConfig, trackers: &HashMap<String, Ema>, round: i64, window: i64) {
        for e in &mut self.entries {
            let lp = e.env.skill.as_ref().and_then(|s| trackers.get(s)).copied();
            let p = e.current(round, window);
            if p.played() {
                let o = cfg.score(&p, lp.map(|l| l.slow));
                e.regret = o.regret;
                e.nohint_win_rate = o.nohint_win_rate;
                e.designer_reward = Some(o.reward);
            }
            if lp.is_some() {
                e.lp = lp;
            }
        }
    }

    /// Recomputes every label from the plays in the window (see the module doc).
    pub fn relabel(&mut self, cfg: &MemoryConfig, reward: &RewardConfig, round: i64, window: i64) {
        let mut band: HashMap<Option<String>, Vec<(f64, usize)>> = HashMap::new();
        for (i, e) in self.entries.iter_mut().enumerate() {
            let p = &e.current(round, window);
            e.label = if p.failures > 0 {
                Label::Failing
            } else if p.hint.plays + p.nohint.plays == 0 {
                if e.label == Label::Seed {
                    Label::Seed
                } else {
                    Label::Unlabelled
                }
            } else if p.is_leak(reward.leak_min_plays) {
                Label::Leak
            } else {
                match p.nohint.rate() {
                    Some(wr) if wr > cfg.too_easy => Label::TooEasy,
                    Some(wr) if wr < cfg.too_hard => Label::TooHard,
                    Some(wr) if wr >= cfg.seed_band.0 && wr <= cfg.seed_band.1 => {
                        band.entry(e.env.skill.clone()).or_default().push((e.regret.unwrap_or(0.0), i));
                        Label::Unlabelled
                    }
                    _ => Label::Unlabelled,
                }
            };
        }
        for (_, mut v) in band {
            v.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            for (_, i) in v.into_iter().take(cfg.seed_top) {
                self.entries[i].label = Label::Seed;
            }
        }
    }

    /// Drops the oldest entries beyond `capacity`; returns how many were dropped.
    pub fn evict(&mut self, capacity: usize) -> usize {
        if self.entries.len() <= capacity {
            return 0;
        }
        let drop = self.entries.len() - capacity;
        self.entries.drain(..drop);
        self.reindex();
        drop
    }

    /// Label counts.
    pub fn label_counts(&self) -> std::collections::BTreeMap<String, usize> {
        let mut m = std::collections::BTreeMap::new();
        for e in &self.entries {
            *m.entry(e.label.to_string()).or_insert(0) += 1;
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spade_schema::Setting;

    pub(crate) fn entry(id: &str, skill: &str, round: i64) -> Entry {
        let env = EnvRow {
            env_id: id.into(),
            code: format!("class {id}Env: pass"),
            hint: Some("think".into()),
            skill: Some(skill.into()),
            setting: Some(Setting::Games),
            ..Default::default()
        };
        Entry::new(&env, round, Label::Unlabelled)
    }

    fn plays(h: (i64, f64, i64), n: (i64, f64, i64)) -> Plays {
        Plays { hint: ArmPlays { plays: h.0, sum: h.1, wins: h.2 }, nohint: ArmPlays { plays: n.0, sum: n.1, wins: n.2 }, failures: 0 }
    }

    #[test]
    fn plays_accumulate_over_rounds_and_rescore() {
        let mut m = Memory::default();
        m.add(entry("a", "logic", 1));
        m.record("a", &plays((4, 4.0, 4), (4, 2.0, 2)), 1);
        m.record("a", &plays((4, 2.0, 2), (4, 0.0, 0)), 2);
        let cfg = RewardConfig::default();
        m.rescore(&cfg, &HashMap::new(), 2, 0);
        let e = m.get("a").unwrap();
        assert_eq!((e.plays.hint.plays, e.plays.nohint.plays), (8, 8));
        assert_eq!(e.last_round, 2);
        assert_eq!(e.first_round, 1);
        // hint 6/8 = 0.75, no-hint 2/8 = 0.25: regret 0.5 → 0.4 + 0.6·plateau(0.25) = 0.4 + 0.6·0.4
        assert!((e.regret.unwrap() - 0.5).abs() < 1e-12);
        assert!((e.designer_reward.unwrap() - 0.64).abs() < 1e-12);
        assert!(!m.record("missing", &Plays::default(), 2));
    }

    #[test]
    fn labels_and_seed_ranking() {
        let mut m = Memory::default();
        let cases = [
            ("easy", plays((4, 4.0, 4), (4, 3.8, 4))),
            ("hard", plays((4, 0.0, 0), (4, 0.2, 0))),
            ("leak", plays((4, 4.0, 4), (4, 0.0, 0))),
            ("s1", plays((4, 3.0, 3), (4, 2.0, 2))),
            ("s2", plays((4, 4.0, 3), (4, 1.0, 1))),
            ("s3", plays((4, 2.0, 2), (4, 2.0, 2))),
        ];
        for (id, p) in cases {
            m.add(entry(id, "logic", 1));
            m.record(id, &p, 1);
        }
        let mut failing = entry("fail", "logic", 1);
        failing.plays.failures = 1;
        m.add(failing);
        let mut unplayed_seed = entry("pool", "logic", 0);
        unplayed_seed.label = Label::Seed;
        m.add(unplayed_seed);
        m.add(entry("new", "logic", 1));
        let rc = RewardConfig::default();
        m.rescore(&rc, &HashMap::new(), 1, 1);
        m.relabel(&MemoryConfig { seed_top: 2, ..Default::default() }, &rc, 1, 1);
        let label = |id: &str| m.get(id).unwrap().label.to_string();
        assert_eq!(label("easy"), "too-easy");
        assert_eq!(label("hard"), "too-hard");
        assert_eq!(label("leak"), "leak");
        assert_eq!(label("fail"), "failing");
        assert_eq!(label("pool"), "seed", "an unplayed seed keeps its label");
        assert_eq!(label("new"), "none");
        // s2 regret 0.75, s1 0.25, s3 0 → top 2 are seeds
        assert_eq!((label("s2").as_str(), label("s1").as_str(), label("s3").as_str()), ("seed", "seed", "none"));
    }

    #[test]
    fn the_window_measures_the_current_agent() {
        let mut m = Memory::default();
        m.add(entry("a", "logic", 0));
        m.record("a", &plays((2, 2.0, 2), (2, 2.0, 2)), 1);
        m.record("a", &plays((2, 1.0, 1), (2, 0.0, 0)), 3);
        m.record("a", &plays((2, 1.0, 1), (2, 1.0, 1)), 3);
        let e = m.get("a").unwrap();
        assert_eq!(e.history.iter().map(|(r, _)| *r).collect::<Vec<_>>(), [1, 3], "one history row per round");
        assert_eq!(e.current(3, 1), plays((4, 2.0, 2), (4, 1.0, 1)), "this round's plays");
        assert_eq!(e.current(3, 3), plays((6, 4.0, 4), (6, 3.0, 3)), "rounds 1..=3");
        assert_eq!(e.current(3, 0), e.plays, "0: every play");
        assert_eq!(e.current(4, 1), plays((4, 2.0, 2), (4, 1.0, 1)), "not played in round 4: its last measurement");
        assert_eq!(e.current(2, 1), plays((2, 2.0, 2), (2, 2.0, 2)), "as of round 2 (the past is not rewritten)");
        assert_eq!(e.current(6, 3), plays((6, 4.0, 4), (6, 3.0, 3)), "stale: the window that ended at round 3");
        // A round of infrastructure errors only is not a play: the last measurement stands.
        m.record("a", &Plays::default(), 5);
        let e = m.get("a").unwrap();
        assert_eq!((e.history.len(), e.last_round), (2, 5));
        assert_eq!(e.current(5, 1), plays((4, 2.0, 2), (4, 1.0, 1)));
        let cfg = RewardConfig::default();
        m.rescore(&cfg, &HashMap::new(), 3, 1);
        assert!((m.get("a").unwrap().nohint_win_rate.unwrap() - 0.25).abs() < 1e-12);
        m.relabel(&MemoryConfig::default(), &cfg, 3, 1);
        assert_eq!(m.get("a").unwrap().label, Label::Seed, "no-hint 1/4 in the seed band at the current policy");
        m.rescore(&cfg, &HashMap::new(), 3, 0);
        m.relabel(&MemoryConfig::default(), &cfg, 3, 0);
        assert_eq!(m.get("a").unwrap().nohint_win_rate, Some(0.5), "lifetime 3/6");
    }

    #[test]
    fn history_round_trips_and_bad_history_names_the_row() {
        let mut m = Memory::default();
        m.add(entry("a", "logic", 1));
        m.record("a", &plays((1, 1.0, 1), (1, 0.5, 0)), 1);
        m.record("a", &plays((1, 0.0, 0), (1, 0.0, 0)), 2);
        assert_eq!(Memory::from_rows(m.to_rows()).unwrap(), m);
        let mut rows = m.to_rows();
        rows[0].history = Some(r#"[{"round": 2}]"#.into());
        let err = Memory::from_rows(rows).unwrap_err();
        assert_eq!((err.index, err.column), (0, "history"));
        assert!(err.msg.contains("hint"), "{err}");
    }

    #[test]
    fn eviction_is_fifo() {
        let mut m = Memory::default();
        for i in 0..5 {
            m.add(entry(&format!("e{i}"), "x", i));
        }
        assert_eq!(m.evict(3), 2);
        let ids: Vec<_> = m.entries().iter().map(|e| e.env.env_id.as_str()).collect();
        assert_eq!(ids, ["e2", "e3", "e4"]);
        assert!(m.get("e0").is_none() && m.get("e4").is_some());
        assert_eq!(m.evict(3), 0);
    }

    #[test]
    fn table_round_trip() {
        let mut m = Memory::default();
        let mut e = entry("a", "logic", 1);
        e.plays = plays((3, 1.5, 1), (2, 0.25, 0));
        e.plays.failures = 1;
        e.lp = Some(Ema { fast: 0.3, slow: 0.2 });
        e.regret = Some(0.625);
        m.add(e);
        m.add(entry("b", "math", 2));
        assert_eq!(Memory::from_rows(m.to_rows()).unwrap(), m);
        let mut dup = m.to_rows();
        dup.push(dup[0].clone());
        assert_eq!(Memory::from_rows(dup).unwrap_err().to_string(), "row 3: column `env_id`: duplicate environment `a` in the memory");
    }
}
