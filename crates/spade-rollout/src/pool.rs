//! The active pool: the round's new environments plus up to P environments of the memory, most
//! recently seen first, never those labelled too easy, too hard, failing or leaking; with no new
//! environment the memory's alone. `--shard I/N` then keeps the environments whose `env_id` hash
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
}

/// How the memory's share of the active pool is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PoolDraw {
    /// [`active_pool`]: the most recently played memory environments with a playable label.
    Recent,
    /// [`drawn_pool`]: the fixed-pool baseline's seeded draw over the whole memory.
    Draw,
}

/// The pool a rollout plays: the new environments, then `want` memory environments chosen by
/// `draw` (`seed` and `round` set the baseline's draw).
pub fn choose_pool(new: Vec<EnvSpec>, memory: Vec<MemoryEnv>, want: usize, draw: PoolDraw, seed: u64, round: u64) -> Vec<EnvSpec> {
    match draw {
        PoolDraw::Recent => active_pool(new, memory, want),
        PoolDraw::Draw => {
            let mut p = active_pool(new, Vec::new(), 0);
            let new_ids: HashSet<String> = p.iter().map(|e| e.env_id.clone()).collect();
            p.extend(drawn_pool(memory, want, seed, round).into_iter().filter(|e| !new_ids.contains(&e.env_id)));
            p
        }
    }
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
        MemoryEnv { env: env(id), last_round, label: label.parse().unwrap() }
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
}
