//! Environment design as a library: the designer's view of the memory ([`memory`]), prompts from
//! editable templates fitted to a token budget ([`prompt`]), response parsing ([`parse`]), ids and
//! `candidates` rows ([`rows`]), the warm-up's supervised pairs ([`warmup`]). The `spade-design` stage is the glue that samples with the model
//! and validates repairs in the sandbox.

#![forbid(unsafe_code)]

pub mod memory;
pub mod parse;
pub mod prompt;
pub mod rows;
pub mod warmup;

pub use memory::{choose_examples, choose_negatives, read_memory, MemoryEntry};
pub use parse::{parse_response, Parsed};
pub use prompt::{design_prompt, group_prompt, Document, Prompt, PromptInfo, PromptInputs, PromptSpec, Templates, DEFAULT_SKILLS};
pub use rows::{candidate_id, candidates_batch, sample_seed, CandidateRow};
pub use warmup::read_docs;

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
    Table(#[from] spade_io::Error),
    #[error(transparent)]
    Model(#[from] spade_model::Error),
    #[error(transparent)]
    Arrow(#[from] arrow::error::ArrowError),
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
