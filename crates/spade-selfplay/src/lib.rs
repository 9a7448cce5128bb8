//! Self-play algorithms over tables: hint-based regret and designer rewards ([`reward`]), the
//! environment memory ([`memory`]), summary statistics and pool diversity ([`stats`]).
//!
//! Pure computation: no model, no sandbox. The `spade-regret` stage is a thin glue of these.

#![forbid(unsafe_code)]

pub mod memory;
pub mod reward;
pub mod score;
pub mod stats;

pub use memory::{Entry, Memory, MemoryConfig};
pub use reward::{ArmPlays, Outcome, Plays, RewardConfig, Variant};
pub use score::{score, CandidateIn, Input, Play, RejectIn, Scored, Scoring};
