//! GRPO training for both SPADE roles: advantages per role ([`advantage`]), the clipped
//! objective with truncated importance sampling and a k3 KL ([`objective`]), an in-place AdamW
//! ([`optim`]), the batches read from tables ([`data`]) and the trainer with exactly resumable
//! checkpoints ([`trainer`]); one step from samples to checkpoint ([`grpo`], the `spade-grpo-step`
//! stage's library), and the designer warm-up's supervised training ([`sft`], `spade-sft`'s).

#![forbid(unsafe_code)]

pub mod advantage;
pub mod card;
pub mod data;
pub mod external;
pub mod grpo;
pub mod objective;
pub mod optim;
pub mod sft;
pub mod trainer;

pub use advantage::{group_advantages, GroupStats, Norm};
pub use data::{
    agent_samples, assign_advantages, designer_samples, AdvantageConfig, DesignIn, DesignerGroup, DesignerInput, EpisodeIn, ReadStats, Role, Sample,
    ScoreIn,
};
pub use grpo::{Balance, DesignerScale, GrpoStep, Update};
pub use objective::{Objective, TokenTerms};
pub use optim::AdamW;
pub use trainer::{LossAgg, StepConfig, StepMetrics, StepPlan, Trainer, TrainerState};
