//! Environment design as a library: the designer's view of the memory ([`memory`]), prompts from
//! editable templates fitted to a token budget ([`prompt`]), response parsing ([`parse`]), ids and
//! `candidates` rows ([`rows`]), the warm-up's supervised pairs ([`warmup`]). The `spade-design` stage is the glue that samples with the model
//! and validates repairs in the sandbox.

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
