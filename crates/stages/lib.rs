//! What several stage programs share that belongs to no library crate: reading the environments
//! a stage plays (`spade-rollout`, `spade-eval --suite envs:…`) from an `envs` or memory table or
//! a folder of seed `.py` files, and the arms a flag names (`spade-rollout --arms`,
//! `spade-grpo-step --train-arms`).

#![forbid(unsafe_code)]

pub mod envs;

use spade_rollout::Arm;

/// The arms of a comma-separated `flag` value (`hint`, `nohint`), each once, in order.
pub fn parse_arms(flag: &str, s: &str) -> anyhow::Result<Vec<Arm>> {
    let mut arms = Vec::new();
    for a in s.split(',').filter(|a| !a.trim().is_empty()) {
        let arm = Arm::parse(a).ok_or_else(|| anyhow::anyhow!("{flag}: `{a}` is neither `hint` nor `nohint`"))?;
        if !arms.contains(&arm) {
            arms.push(arm);
        }
    }
    if arms.is_empty() {
        anyhow::bail!("{flag}: give hint, nohint or both");
    }
    Ok(arms)
}
