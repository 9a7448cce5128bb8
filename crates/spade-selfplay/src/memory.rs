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
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::DataType;
use serde::Serialize;
use spade_io::Batch;
use spade_schema::MEMORY;

use crate::reward::{Arm, Ema, Plays, RewardConfig};

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
    pub env_id: String,
    pub code: String,
    pub hint: Option<String>,
    pub skill: Option<String>,
    pub setting: Option<String>,
    pub candidate_id: Option<String>,
    pub first_round: i64,
    pub last_round: i64,
    /// Lifetime totals of every play.
    pub plays: Plays,
    /// Plays per round, ascending by round (the `history` column).
    pub history: Vec<(i64, Plays)>,
    pub regret: Option<f64>,
    pub nohint_win_rate: Option<f64>,
    pub designer_reward: Option<f64>,
    pub label: String,
    pub lp: Option<Ema>,
}

/// The memory, in insertion order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Memory {
    entries: Vec<Entry>,
    index: HashMap<String, usize>,
}

fn strs(b: &Batch, name: &str) -> spade_io::Result<Option<StringArray>> {
    Ok(b.opt_column(name, &DataType::Utf8)?.map(|a| a.as_any().downcast_ref::<StringArray>().expect("utf8").clone()))
}

fn get_str(a: &Option<StringArray>, i: usize) -> Option<String> {
    a.as_ref().filter(|a| a.is_valid(i)).map(|a| a.value(i).to_string())
}

fn i64s(b: &Batch, name: &str) -> spade_io::Result<Option<Int64Array>> {
    Ok(b.opt_column(name, &DataType::Int64)?.map(|a| a.as_any().downcast_ref::<Int64Array>().expect("i64").clone()))
}

fn f64s(b: &Batch, name: &str) -> spade_io::Result<Option<Float64Array>> {
    Ok(b.opt_column(name, &DataType::Float64)?.map(|a| a.as_any().downcast_ref::<Float64Array>().expect("f64").clone()))
}

fn get_i64(a: &Option<Int64Array>, i: usize) -> Option<i64> {
    a.as_ref().filter(|a| a.is_valid(i)).map(|a| a.value(i))
}

fn get_f64(a: &Option<Float64Array>, i: usize) -> Option<f64> {
    a.as_ref().filter(|a| a.is_valid(i)).map(|a| a.value(i))
}

fn arm_json(a: &Arm) -> serde_json::Value {
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
    let arm = |x: &serde_json::Value| -> Option<Arm> {
        let a = x.as_array().filter(|a| a.len() == 3)?;
        Some(Arm { plays: a[0].as_i64()?, sum: a[1].as_f64()?, wins: a[2].as_i64()? })
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
        self.index = self.entries.iter().enumerate().map(|(i, e)| (e.env_id.clone(), i)).collect();
    }

    /// Reads a memory table (only `env_id` and `code` required; counts default to 0).
    pub fn from_batches(batches: &[Batch]) -> spade_io::Result<Memory> {
        let mut m = Memory::default();
        for b in batches {
            let ids = b.required("env_id", &DataType::Utf8)?;
            let ids = ids.as_any().downcast_ref::<StringArray>().expect("utf8");
            let code = b.required("code", &DataType::Utf8)?;
            let code = code.as_any().downcast_ref::<StringArray>().expect("utf8");
            let (hint, skill, setting, cand, label) =
                (strs(b, "hint")?, strs(b, "skill")?, strs(b, "setting")?, strs(b, "candidate_id")?, strs(b, "label")?);
            let (first, last) = (i64s(b, "first_round")?, i64s(b, "last_round")?);
            let (ph, pn, wh, wn, fl) =
                (i64s(b, "plays_hint")?, i64s(b, "plays_nohint")?, i64s(b, "wins_hint")?, i64s(b, "wins_nohint")?, i64s(b, "failures")?);
            let (sh, sn) = (f64s(b, "sum_hint")?, f64s(b, "sum_nohint")?);
            let (regret, wr, dr, lf, ls) =
                (f64s(b, "regret")?, f64s(b, "nohint_win_rate")?, f64s(b, "designer_reward")?, f64s(b, "lp_fast")?, f64s(b, "lp_slow")?);
            let history = strs(b, "history")?;
            for i in 0..b.num_rows() {
                let e = Entry {
                    env_id: ids.value(i).to_string(),
                    code: code.value(i).to_string(),
                    hint: get_str(&hint, i),
                    skill: get_str(&skill, i),
                    setting: get_str(&setting, i),
                    candidate_id: get_str(&cand, i),
                    first_round: get_i64(&first, i).unwrap_or(0),
                    last_round: get_i64(&last, i).unwrap_or(0),
                    plays: Plays {
                        hint: Arm { plays: get_i64(&ph, i).unwrap_or(0), sum: get_f64(&sh, i).unwrap_or(0.0), wins: get_i64(&wh, i).unwrap_or(0) },
                        nohint: Arm { plays: get_i64(&pn, i).unwrap_or(0), sum: get_f64(&sn, i).unwrap_or(0.0), wins: get_i64(&wn, i).unwrap_or(0) },
                        failures: get_i64(&fl, i).unwrap_or(0),
                    },
                    history: match get_str(&history, i) {
                        Some(h) => parse_history(&h).map_err(|m| b.row_error(i, "history", m))?,
                        None => Vec::new(),
                    },
                    regret: get_f64(&regret, i),
                    nohint_win_rate: get_f64(&wr, i),
                    designer_reward: get_f64(&dr, i),
                    label: get_str(&label, i).unwrap_or_else(|| "none".into()),
                    lp: match (get_f64(&lf, i), get_f64(&ls, i)) {
                        (Some(fast), Some(slow)) => Some(Ema { fast, slow }),
                        _ => None,
                    },
                };
                if m.index.contains_key(&e.env_id) {
                    return Err(b.row_error(i, "env_id", format!("duplicate environment `{}` in the memory", e.env_id)));
                }
                m.index.insert(e.env_id.clone(), m.entries.len());
                m.entries.push(e);
            }
        }
        Ok(m)
    }

    /// The memory as a table in the `memory` contract.
    pub fn to_batch(&self) -> RecordBatch {
        let e = &self.entries;
        let s = |f: &dyn Fn(&Entry) -> Option<String>| -> ArrayRef { Arc::new(e.iter().map(f).collect::<StringArray>()) };
        let i = |f: &dyn Fn(&Entry) -> i64| -> ArrayRef { Arc::new(e.iter().map(|x| Some(f(x))).collect::<Int64Array>()) };
        let fl = |f: &dyn Fn(&Entry) -> Option<f64>| -> ArrayRef { Arc::new(e.iter().map(f).collect::<Float64Array>()) };
        let cols: Vec<ArrayRef> = vec![
            s(&|x| Some(x.env_id.clone())),
            s(&|x| Some(x.code.clone())),
            s(&|x| x.hint.clone()),
            s(&|x| x.skill.clone()),
            s(&|x| x.setting.clone()),
            s(&|x| x.candidate_id.clone()),
            i(&|x| x.first_round),
            i(&|x| x.last_round),
            i(&|x| x.plays.hint.plays),
            fl(&|x| Some(x.plays.hint.sum)),
            i(&|x| x.plays.nohint.plays),
            fl(&|x| Some(x.plays.nohint.sum)),
            i(&|x| x.plays.hint.wins),
            i(&|x| x.plays.nohint.wins),
            i(&|x| x.plays.failures),
            fl(&|x| x.regret),
            fl(&|x| x.nohint_win_rate),
            fl(&|x| x.designer_reward),
            s(&|x| Some(x.label.clone())),
            fl(&|x| x.lp.map(|l| l.fast)),
            fl(&|x| x.lp.map(|l| l.slow)),
            s(&|x| Some(history_json(&x.history))),
        ];
        RecordBatch::try_new(MEMORY.schema(), cols).expect("memory columns follow the contract")
    }

    /// Adds an environment not yet in the memory; returns whether it was new.
    pub fn add(&mut self, e: Entry) -> bool {
        if self.index.contains_key(&e.env_id) {
            return false;
        }
        self.index.insert(e.env_id.clone(), self.entries.len());
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
            if let (Some(s), Some(lp)) = (&e.skill, e.lp) {
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
            let lp = e.skill.as_ref().and_then(|s| trackers.get(s)).copied();
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
                "failing".into()
            } else if p.hint.plays + p.nohint.plays == 0 {
                if e.label == "seed" {
                    "seed".into()
                } else {
                    "none".into()
                }
            } else if p.is_leak(reward.leak_min_plays) {
                "leak".into()
            } else {
                match p.nohint.rate() {
                    Some(wr) if wr > cfg.too_easy => "too-easy".into(),
                    Some(wr) if wr < cfg.too_hard => "too-hard".into(),
                    Some(wr) if wr >= cfg.seed_band.0 && wr <= cfg.seed_band.1 => {
                        band.entry(e.skill.clone()).or_default().push((e.regret.unwrap_or(0.0), i));
                        "none".into()
                    }
                    _ => "none".into(),
                }
            };
        }
        for (_, mut v) in band {
            v.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            for (_, i) in v.into_iter().take(cfg.seed_top) {
                self.entries[i].label = "seed".into();
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
            *m.entry(e.label.clone()).or_insert(0) += 1;
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn entry(id: &str, skill: &str, round: i64) -> Entry {
        Entry {
            env_id: id.into(),
            code: format!("class {id}Env: pass"),
            hint: Some("think".into()),
            skill: Some(skill.into()),
            setting: Some("games".into()),
            candidate_id: None,
            first_round: round,
            last_round: round,
            plays: Plays::default(),
            history: Vec::new(),
            regret: None,
            nohint_win_rate: None,
            designer_reward: None,
            label: "none".into(),
            lp: None,
        }
    }

    fn plays(h: (i64, f64, i64), n: (i64, f64, i64)) -> Plays {
        Plays { hint: Arm { plays: h.0, sum: h.1, wins: h.2 }, nohint: Arm { plays: n.0, sum: n.1, wins: n.2 }, failures: 0 }
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
        unplayed_seed.label = "seed".into();
        m.add(unplayed_seed);
        m.add(entry("new", "logic", 1));
        let rc = RewardConfig::default();
        m.rescore(&rc, &HashMap::new(), 1, 1);
        m.relabel(&MemoryConfig { seed_top: 2, ..Default::default() }, &rc, 1, 1);
        let label = |id: &str| m.get(id).unwrap().label.clone();
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
        assert_eq!(m.get("a").unwrap().label, "seed", "no-hint 1/4 in the seed band at the current policy");
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
        let b = Batch { batch: m.to_batch(), origin: "mem".into(), first_row: 0 };
        assert_eq!(Memory::from_batches(&[b]).unwrap(), m);
        let mut batch = m.to_batch();
        let k = batch.schema().index_of("history").unwrap();
        let mut cols = batch.columns().to_vec();
        cols[k] = Arc::new(StringArray::from(vec![r#"[{"round": 2}]"#]));
        batch = RecordBatch::try_new(batch.schema(), cols).unwrap();
        let err = Memory::from_batches(&[Batch { batch, origin: "mem.parquet".into(), first_row: 0 }]).unwrap_err().to_string();
        assert!(err.contains("mem.parquet") && err.contains("history") && err.contains("hint"), "{err}");
    }

    #[test]
    fn eviction_is_fifo() {
        let mut m = Memory::default();
        for i in 0..5 {
            m.add(entry(&format!("e{i}"), "x", i));
        }
        assert_eq!(m.evict(3), 2);
        let ids: Vec<_> = m.entries().iter().map(|e| e.env_id.as_str()).collect();
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
        let batch = m.to_batch();
        let b = Batch { batch, origin: "mem".into(), first_row: 0 };
        assert_eq!(Memory::from_batches(&[b]).unwrap(), m);
    }
}
