//! The agent's side of self-play: multi-turn episodes in both arms (with and without the
//! privileged hint), batched across episodes, kept as tokens end to end.
//!
//! - [`pool`]: the active pool (new environments plus the memory's most recent playable ones)
//!   and the deterministic shard slice.
//! - [`seed`]: episode seeds from (run seed, round, step, `env_id`, arm, episode).
//! - [`prompt`]: the agent's prompt templates (files under `data/prompts/`) and the chat-template
//!   segments appended between turns.
//! - [`action`]: the action sent to the environment: `\boxed{…}` in games, a JSON tool call in
//!   tool-use.
//! - [`episode`]: the episode loop. All live episodes awaiting an action share one `generate`
//!   call; environment steps run on a thread pool meanwhile (episodes are split into two fixed
//!   groups, generated in turn, so one group's steps run while the other's tokens are sampled).
//!   The sequence is built by appending: the model's sampled tokens as they were sampled (loss
//!   mask 1, log-probs kept), and for every observation only the new chat-template segment,
//!   encoded on its own (mask 0, log-prob 0). Nothing is ever re-tokenised.
//! - [`policy`]: what the loop needs from a model ([`Policy`]); [`ModelPolicy`] wraps a
//!   `spade_model::Generator` (the embedded model or a server serving it), [`ScriptedPolicy`]
//!   replies with given texts (for tests).

#![forbid(unsafe_code)]

pub mod action;
pub mod episode;
pub mod policy;
pub mod pool;
pub mod prompt;
pub mod seed;

pub use episode::{episode_specs, first_prompt, outcome_summary, play, Arm, EpisodeOutcome, EpisodeSpec, FirstPrompt, PlayConfig, PlayStats, Stamp};
pub use policy::{ModelPolicy, Policy, ScriptedPolicy};
pub use pool::{active_pool, choose_pool, drawn_pool, weighted_pool, EnvSpec, MemoryEnv, PoolDraw};
pub use prompt::{Templates, TurnFormat};
pub use spade_schema::Setting;

/// Errors of the rollout library (environment failures are not errors: they are recorded on
/// the episode).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Model(#[from] spade_model::Error),
    #[error("prompt template {name}: {message}")]
    Template { name: String, message: String },
    #[error("chat template: {0}")]
    Chat(String),
    #[error("{0}")]
    Invalid(String),
}

pub type Result<T> = std::result::Result<T, Error>;
