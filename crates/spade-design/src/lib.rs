//! Environment design as a library: the designer's view of the memory ([`memory`]), prompts from
//! editable templates fitted to a token budget ([`prompt`]), response parsing ([`parse`]), ids and
//! `candidates` rows ([`rows`]), the warm-up's supervised pairs ([`warmup`]). The `spade-design` stage is the glue that samples with the model
//! and validates repairs in the sandbox.

#![forbid(unsafe_code)]

pub mod memory;
pub mod parse;
pub mod prompt;
pub mod rows;
pub mod session;
pub mod warmup;

pub use memory::{choose_examples, choose_negatives, StoredEntry};
pub use parse::{parse_response, Parsed};
pub use prompt::{
    default_skills, design_prompt, group_prompt, Document, HintMode, Prompt, PromptInfo, PromptInputs, PromptSpec, Templates, DEFAULT_SKILLS,
    TOOL_USE_SKILLS,
};
pub use rows::{candidate_id, sample_seed, CandidateRow};
pub use spade_schema::{MemoryRow, Setting};

use sha2::{Digest, Sha256};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Io(String),
    #[error("prompt template: {0}")]
    Template(String),
    #[error("{0}")]
    Budget(String),
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Model(#[from] spade_model::Error),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// First 16 hex digits of the SHA-256 of the parts joined by NUL bytes.
pub fn hash_hex(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            h.update([0u8]);
        }
        h.update(p.as_bytes());
    }
    hex::encode(&h.finalize()[..8])
}

/// The skill of prompt group `i` in `round`. With `per_round` 0 every skill is used, round-robin over
/// the groups and shifted by the round; with `per_round` k (1 ≤ k < skills) round r (from 1) uses the
/// k skills starting at (r − 1)·k, wrapping (a window advancing by k each round, disjoint from the
/// previous one while k divides the skill count, as the reference's skills per regeneration),
/// round-robin over its groups.
pub fn skill_for(skills: &[String], per_round: usize, round: u64, i: usize) -> &str {
    let n = skills.len();
    if per_round == 0 || per_round >= n {
        return &skills[(i + round as usize) % n];
    }
    let start = (round.saturating_sub(1) as usize * per_round) % n;
    &skills[(start + i % per_round) % n]
}

/// `--setting`: one setting (`games`, `tool-use`) or a share of each, `games,tool-use` (equal) or
/// `games=3,tool-use=1` (weights), as a cycle of settings the groups of a round take in turn.
pub fn parse_settings(s: &str) -> Result<Vec<Setting>, String> {
    let mut shares: Vec<(Setting, usize)> = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, w) = match part.split_once('=') {
            Some((n, w)) => (n.trim(), w.trim().parse::<usize>().map_err(|_| format!("`{part}`: expected SETTING=WEIGHT, a whole number"))?),
            None => (part, 1),
        };
        let setting: Setting = match name {
            "games" | "tool-use" => name.parse()?,
            _ => return Err(format!("`{name}`: expected games or tool-use")),
        };
        if shares.iter().any(|(n, _)| *n == setting) {
            return Err(format!("`{name}` given twice"));
        }
        shares.push((setting, w.min(100)));
    }
    shares.retain(|(_, w)| *w > 0);
    let total: usize = shares.iter().map(|(_, w)| w).sum();
    if total == 0 {
        return Err(format!("`{s}`: expected games, tool-use, or a share such as games=3,tool-use=1"));
    }
    // Smooth weighted round-robin, so the settings interleave (games=2,tool-use=1 → games,
    // tool-use, games): each turn every setting earns its weight, the richest (first on a tie)
    // goes and pays the total.
    let mut credit = vec![0i64; shares.len()];
    let mut out = Vec::with_capacity(total);
    for _ in 0..total {
        for (c, (_, w)) in credit.iter_mut().zip(&shares) {
            *c += *w as i64;
        }
        let k = (0..shares.len()).max_by(|&a, &b| credit[a].cmp(&credit[b]).then(b.cmp(&a))).expect("a setting");
        credit[k] -= total as i64;
        out.push(shares[k].0);
    }
    Ok(out)
}

/// The setting of group `i` of `round`: the cycle's entry, shifted by the round so that a round of
/// few documents still sees every setting over the run.
pub fn setting_for(cycle: &[Setting], round: u64, i: usize) -> Setting {
    cycle[(i + round.saturating_sub(1) as usize) % cycle.len()]
}

#[cfg(test)]
mod skill_tests {
    use super::skill_for;

    #[test]
    fn a_window_of_skills_advances_each_round() {
        let skills: Vec<String> = ["a", "b", "c", "d", "e", "f"].map(String::from).to_vec();
        let of = |k, r| (0..4).map(|i| skill_for(&skills, k, r, i).to_string()).collect::<Vec<_>>().join("");
        assert_eq!(of(0, 1), "bcde", "all skills, shifted by the round");
        assert_eq!(of(2, 1), "abab");
        assert_eq!(of(2, 2), "cdcd");
        assert_eq!(of(2, 3), "efef");
        assert_eq!(of(2, 4), "abab", "wraps");
        assert_eq!(of(4, 2), "efab", "a window may wrap");
        assert_eq!(of(6, 1), of(0, 1), "k ≥ skills is every skill");
    }
}

#[cfg(test)]
mod setting_tests {
    use super::{parse_settings, setting_for, Setting};

    #[test]
    fn settings_share_the_groups_by_weight() {
        let names = |v: Vec<Setting>| v.iter().map(|s| s.as_str()).collect::<Vec<_>>();
        assert_eq!(names(parse_settings("games").unwrap()), ["games"]);
        assert_eq!(names(parse_settings("games,tool-use").unwrap()), ["games", "tool-use"]);
        let c = parse_settings("games=3,tool-use=1").unwrap();
        assert_eq!(c.iter().filter(|s| **s == Setting::Games).count(), 3);
        assert_eq!(c.len(), 4);
        assert_eq!(names(parse_settings("games=2,tool-use=1").unwrap()), ["games", "tool-use", "games"]);
        assert!(parse_settings("chess").is_err() && parse_settings("games,games").is_err() && parse_settings("games=x").is_err());
        let c = parse_settings("games,tool-use").unwrap();
        assert_eq!((setting_for(&c, 1, 0), setting_for(&c, 1, 1), setting_for(&c, 2, 0)), (Setting::Games, Setting::ToolUse, Setting::ToolUse));
    }
}
