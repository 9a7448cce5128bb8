//! What several stage programs share that belongs to no library crate: reading the environments
//! a stage plays (`spade-rollout`, `spade-eval --suite envs:…`) from an `envs` or memory table or
//! a folder of seed `.py` files, the arms a flag names (`spade-rollout --arms`,
//! `spade-grpo-step --train-arms`), and the training batches read from tables (`spade-grpo-step`).

#![forbid(unsafe_code)]

pub mod envs;
pub mod foreign;

use anyhow::Context;
use spade_io::read_rows;
use spade_rollout::Arm;
use spade_schema::{CANDIDATES, ROLLOUTS, SCORES};
use spade_train::{agent_samples, designer_samples, DesignIn, DesignerGroup, DesignerInput, EpisodeIn, ReadStats, Sample, ScoreIn};

/// The agent's samples of rollouts tables ([`spade_train::agent_samples`]), only the episodes of
/// `arms` when given; errors name the file and row.
pub fn read_agent(paths: &[String], arms: Option<&[Arm]>) -> anyhow::Result<(Vec<Sample>, ReadStats)> {
    let rows = read_rows::<EpisodeIn, _>(paths, &ROLLOUTS).context("agent batch")?;
    Ok(agent_samples(&rows.rows, arms).map_err(|e| rows.origins.error(e))?)
}

/// The designer's samples of candidates tables joined with scores tables
/// ([`spade_train::designer_samples`]); errors name the file and row.
pub fn read_designer(candidates: &[String], scores: &[String], group: DesignerGroup) -> anyhow::Result<(Vec<Sample>, ReadStats)> {
    if candidates.is_empty() {
        return Ok((Vec::new(), ReadStats::default()));
    }
    let s = read_rows::<ScoreIn, _>(scores, &SCORES).context("designer scores")?;
    let c = read_rows::<DesignIn, _>(candidates, &CANDIDATES).context("designer candidates")?;
    Ok(designer_samples(&c.rows, &s.rows, group).map_err(|(input, e)| match input {
        DesignerInput::Candidates => c.origins.error(e),
        DesignerInput::Scores => s.origins.error(e),
    })?)
}

/// The arms of a comma-separated `flag` value (`hint`, `nohint`), each once, in order.
pub fn parse_arms(flag: &str, s: &str) -> anyhow::Result<Vec<Arm>> {
    let mut arms = Vec::new();
    for a in s.split(',').filter(|a| !a.trim().is_empty()) {
        let arm: Arm = a.parse().map_err(|_| anyhow::anyhow!("{flag}: `{a}` is neither `hint` nor `nohint`"))?;
        if !arms.contains(&arm) {
            arms.push(arm);
        }
    }
    if arms.is_empty() {
        anyhow::bail!("{flag}: give hint, nohint or both");
    }
    Ok(arms)
}
