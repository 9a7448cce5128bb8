//! The active pool: the round's new environments plus up to P environments of the memory, never
//! those labelled too easy, too hard, failing or leaking; with no new environment the memory's
//! alone. The memory's share is drawn without replacement, seeded by (seed, round), with weight
//! p(1 - p) per environment ([`weighted_pool`]: p its no-hint win rate with one win and one loss
//! added, the expected reward variance of a group, so the environments a group can learn from come
//! most often and unplayed ones are as likely as the best), uniformly, or, as before, most recently
//! seen first ([`active_pool`]). `--shard I/N` then keeps the environments whose `env_id` hash
//! falls in slice I, so the shards of one call partition its pool.
//!
//! The fixed-pool baseline draws instead ([`drawn_pool`]): each round takes the next P environments
//! of the whole memory in a seeded order, without replacement until every one has been played
//! (the corpus sampler's draw, `spade_corpus::draw`).

use std::collections::HashSet;

use spade_schema::Label;

use crate::Setting;

/// Memory labels never played.
pub const EXCLUDED_LABELS: [Label; 4] = [Label::TooEasy, Label::TooHard, Label::Failing, Label::Leak];

/// One environment to play.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvSpec {
    pub env_id: String,
    pub code: String,
    pub hint: Option<String>,
    pub skill: Option<String>,
    pub setting: Setting,
    /// `new` (from `--envs`) or `memory`.
    pub origin: &'static str,
}

/// An environment of the memory, with what pool selection needs.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryEnv {
    pub env: EnvSpec,
    pub last_round: i64,
    pub label: Label,
    /// No-hint episodes played and won over the memory's lifetime.
    pub plays_nohint: i64,
    pub wins_nohint: i64,
}

impl MemoryEnv {
    /// The draw weight p(1 - p), p = (wins + 1) / (plays + 2): 0.25 unplayed, towards 0 as the
    /// agent always or never wins.
    pub fn weight(&self) -> f64 {
        let p = (self.wins_nohint.max(0) as f64 + 1.0) / (self.plays_nohint.max(0) as f64 + 2.0);
        let p = p.clamp(0.0, 1.0);
        p * (1.0 - p)
    }
}

/// How the memory's share of the active pool is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PoolDraw {
    /// [`active_pool`]: the most recently played memory environments with a playable label.
    Recent,
    /// [`drawn_pool`]: the fixed-pool baseline's seeded draw over the whole memory.
    Draw,
    /// [`weighted_pool`] by [`MemoryEnv::weight`].
    Weighted,
    /// [`weighted_pool`], every playable environment alike.
    Uniform,
}

/// The pool a rollout plays: the new environments, then `want` memory environments chosen by
/// `draw` (`seed` and `round` set the baseline's draw; `seed`, `round` and `step` the weighted
/// and uniform ones).
pub fn choose_pool(new: Vec<EnvSpec>, memory: Vec<MemoryEnv>, want: usize, draw: PoolDraw, seed: u64, round: u64, step: u64) -> Vec<EnvSpec> {
    let mut p = active_pool(new, Vec::new(), 0);
    let new_ids: HashSet<String> = p.iter().map(|e| e.env_id.clone()).collect();
    let drawn = match draw {
        PoolDraw::Recent => return active_pool(p, memory, want),
        PoolDraw::Draw => drawn_pool(memory, want, seed, round),
        PoolDraw::Weighted | PoolDraw::Uniform => {
            let memory = memory.into_iter().filter(|m| !new_ids.contains(&m.env.env_id)).collect();
            weighted_pool(memory, want, seed, round, step, draw == PoolDraw::Uniform)
        }
    };
    p.extend(drawn.into_iter().filter(|e| !new_ids.contains(&e.env_id)));
    p
}

/// Up to `pool` playable memory environments (each `env_id` once, its first row), drawn without
/// replacement with probability proportional to [`MemoryEnv::weight`] (or uniformly): each gets
/// the key ln(u) / w with u uniform in (0, 1) from a hash of (its id, `seed`, `round`, `step`),
/// and the largest keys are taken (Efraimidis and Spirakis' weighted sampling). The draw depends
/// only on the ids, weights, seed, round and step, never on row order.
pub fn weighted_pool(memory: Vec<MemoryEnv>, pool: usize, seed: u64, round: u64, step: u64, uniform: bool) -> Vec<EnvSpec> {
    let mut seen = HashSet::new();
    let round_seed = xxhash_rust::xxh3::xxh3_64_with_seed(&[round.to_le_bytes(), step.to_le_bytes()].concat(), seed);
    let mut keyed: Vec<(f64, EnvSpec)> = memory
        .into_iter()
        .filter(|m| !EXCLUDED_LABELS.contains(&m.label) && seen.insert(m.env.env_id.clone()))
        .map(|m| {
            let h = xxhash_rust::xxh3::xxh3_64_with_seed(m.env.env_id.as_bytes(), round_seed);
            let u = ((h >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
            let w = if uniform { 1.0 } else { m.weight().max(1e-9) };
            (u.ln() / w, m.env)
        })
        .collect();
    keyed.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.env_id.cmp(&b.1.env_id)));
    keyed.into_iter().take(pool).map(|(_, e)| EnvSpec { origin: "memory", ..e }).collect()
}

/// New environments (duplicates of an `env_id` dropped, first kept), then up to `pool` memory
/// environments not among them: playable labels, `last_round` descending, later rows first
/// among equals.
pub fn active_pool(new: Vec<EnvSpec>, memory: Vec<MemoryEnv>, pool: usize) -> Vec<EnvSpec> {
    let mut seen = HashSet::new();
    let mut out: Vec<EnvSpec> = Vec::new();
    for e in new {
        if seen.insert(e.env_id.clone()) {
            out.push(EnvSpec { origin: "new", ..e });
        }
    }
    let mut mem: Vec<(usize, MemoryEnv)> = memory.into_iter().enumerate().filter(|(_, m)| !EXCLUDED_LABELS.contains(&m.label)).collect();
    mem.sort_by(|(ia, a), (ib, b)| b.last_round.cmp(&a.last_round).then(ib.cmp(ia)));
    let mut taken = 0;
    for (_, m) in mem {
        if taken == pool {
            break;
        }
        if seen.insert(m.env.env_id.clone()) {
            out.push(EnvSpec { origin: "memory", ..m.env });
            taken += 1;
        }
    }
    out
}

/// Round `round`'s draw of `pool` environments of the whole memory (labels ignored: the baseline
/// does not curate), seeded by `seed`, in draw order.
pub fn drawn_pool(memory: Vec<MemoryEnv>, pool: usize, seed: u64, round: u64) -> Vec<EnvSpec> {
    let mut seen = HashSet::new();
    let envs: Vec<EnvSpec> = memory.into_iter().filter(|m| seen.insert(m.env.env_id.clone())).map(|m| m.env).collect();
    let ids: Vec<&str> = envs.iter().map(|e| e.env_id.as_str()).collect();
    let picks = spade_corpus::draw::draw(&ids, seed, round, pool);
    let mut slots: Vec<Option<EnvSpec>> = envs.into_iter().map(Some).collect();
    picks.into_iter().filter_map(|i| slots[i].take()).map(|e| EnvSpec { origin: "memory", ..e }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(id: &str) -> EnvSpec {
        EnvSpec { env_id: id.into(), code: String::new(), hint: None, skill: None, setting: Setting::Games, origin: "" }
    }
    fn mem(id: &str, last_round: i64, label: &str) -> MemoryEnv {
        MemoryEnv { env: env(id), last_round, label: label.parse().unwrap(), plays_nohint: 0, wins_nohint: 0 }
    }
    fn played(id: &str, plays: i64, wins: i64) -> MemoryEnv {
        MemoryEnv { plays_nohint: plays, wins_nohint: wins, ..mem(id, 1, "none") }
    }

    #[test]
    fn pool_takes_recent_playable_memory() {
        let memory = vec![
            mem("old", 1, "seed"),
            mem("easy", 5, "too-easy"),
            mem("hard", 5, "too-hard"),
            mem("fail", 5, "failing"),
            mem("leak", 5, "leak"),
            mem("recent", 4, "none"),
            mem("n1", 3, "none"),
            mem("recent2", 4, "seed"),
            mem("new1", 9, "none"),
        ];
        let ids = |v: Vec<EnvSpec>| v.into_iter().map(|e| format!("{}:{}", e.env_id, e.origin)).collect::<Vec<_>>();
        let p = active_pool(vec![env("new1"), env("new2"), env("new1")], memory.clone(), 3);
        assert_eq!(ids(p), ["new1:new", "new2:new", "recent2:memory", "recent:memory", "n1:memory"]);
        let p = active_pool(vec![], memory.clone(), 2);
        assert_eq!(ids(p), ["new1:memory", "recent2:memory"]);
        assert!(active_pool(vec![], memory, 0).is_empty());
    }

    #[test]
    fn drawn_pools_cover_the_memory_before_repeating() {
        let memory: Vec<MemoryEnv> = (0..7).map(|i| mem(&format!("e{i}"), i, if i == 0 { "too-hard" } else { "seed" })).collect();
        let ids = |r: u64| drawn_pool(memory.clone(), 3, 5, r).into_iter().map(|e| e.env_id).collect::<Vec<_>>();
        let (r1, r2) = (ids(1), ids(2));
        assert_eq!(r1, ids(1));
        assert_eq!(r1.len(), 3);
        assert!(r1.iter().all(|e| !r2.contains(e)), "{r1:?} vs {r2:?}");
        let mut all: Vec<String> = r1.into_iter().chain(r2).chain(ids(3).into_iter().take(1)).collect();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 7, "three rounds of 3 play all 7 environments");
    }

    #[test]
    fn weighted_pools_spread_by_learning_potential() {
        // 20 environments never won in 30 plays, 20 won half the time, 20 unplayed, one too easy.
        let mut memory: Vec<MemoryEnv> = Vec::new();
        for i in 0..20 {
            memory.push(played(&format!("never{i}"), 30, 0));
            memory.push(played(&format!("half{i}"), 30, 15));
            memory.push(played(&format!("new{i}"), 0, 0));
        }
        memory.push(MemoryEnv { label: Label::TooEasy, ..played("easy", 30, 30) });
        let draw = |r: u64, uniform: bool| weighted_pool(memory.clone(), 10, 7, r, 0, uniform);
        let ids = |v: Vec<EnvSpec>| v.into_iter().map(|e| e.env_id).collect::<Vec<_>>();
        // Seeded: the same (seed, round) draws the same pool, in any row order.
        assert_eq!(ids(draw(1, false)), ids(draw(1, false)));
        let mut reversed = memory.clone();
        reversed.reverse();
        assert_eq!(ids(weighted_pool(reversed, 10, 7, 1, 0, false)), ids(draw(1, false)));
        assert_ne!(ids(draw(1, false)), ids(draw(2, false)), "each round draws afresh");
        assert_ne!(ids(draw(1, false)), ids(weighted_pool(memory.clone(), 10, 7, 1, 1, false)), "and each step");
        let (mut counts, mut ucounts) = ([0usize; 3], [0usize; 3]);
        let mut distinct = HashSet::new();
        for r in 1..=200 {
            for (uniform, c) in [(false, &mut counts), (true, &mut ucounts)] {
                for e in draw(r, uniform) {
                    assert!(e.env_id != "easy", "too-easy environments are never played");
                    assert_eq!(e.origin, "memory");
                    c[["never", "half", "new"].iter().position(|p| e.env_id.starts_with(p)).unwrap()] += 1;
                    distinct.insert(e.env_id);
                }
            }
        }
        // Weights 0.030 : 0.25 : 0.25 (p = 1/32, 1/2, 1/2) against 1 : 1 : 1 uniformly.
        assert!(counts[0] * 4 < counts[1] && counts[0] * 4 < counts[2], "{counts:?}");
        assert!(counts[1].abs_diff(counts[2]) * 5 < counts[1], "{counts:?}");
        assert!(ucounts.iter().all(|&c| c.abs_diff(2000 / 3) < 150), "{ucounts:?}");
        assert_eq!(distinct.len(), 60, "every playable environment comes up");
        assert_eq!(draw(1, false).len(), 10);
        assert_eq!(weighted_pool(memory.clone(), 100, 7, 1, 0, false).len(), 60);
    }

    #[test]
    fn chosen_pools_put_new_environments_first_and_never_twice() {
        let memory = vec![played("a", 4, 2), played("b", 4, 2), played("c", 4, 2)];
        for draw in [PoolDraw::Recent, PoolDraw::Draw, PoolDraw::Weighted, PoolDraw::Uniform] {
            let p = choose_pool(vec![env("b"), env("n")], memory.clone(), 2, draw, 3, 1, 0);
            let ids: Vec<_> = p.iter().map(|e| format!("{}:{}", e.env_id, e.origin)).collect();
            assert_eq!(&ids[..2], ["b:new", "n:new"], "{draw:?}");
            // The baseline's draw is over the whole memory, so a new environment drawn again leaves a gap.
            assert_eq!(ids.len(), if draw == PoolDraw::Draw { ids.len().max(3) } else { 4 }, "{draw:?}: {ids:?}");
            assert!(ids[2..].iter().all(|i| i == "a:memory" || i == "c:memory"), "{draw:?}: {ids:?}");
        }
    }
}
