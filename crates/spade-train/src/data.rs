//! The two training batches read from tables: agent episodes (`rollouts`) and designer samples
//! (`candidates` joined with `scores` on `candidate_id`), as token sequences with a loss mask,
//! behaviour log-probs aligned one-to-one, a temperature, a raw reward and a group key.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use spade_schema::{Arm, RewardKind, RowError, Status};

use crate::advantage::{group_advantages, GroupStats, Norm};

/// Which role a sample trains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Agent,
    Designer,
}

/// One training sequence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub role: Role,
    /// The whole sequence the model saw and produced.
    pub tokens: Vec<u32>,
    /// 1 on trained tokens (the agent's own tokens; the designer's response), aligned with `tokens`.
    pub mask: Vec<u8>,
    /// Behaviour log-probs aligned with `tokens` (0 where the mask is 0).
    pub behaviour: Vec<f32>,
    /// Sampling temperature; log-probs are scored at it.
    pub temperature: f32,
    /// Raw reward (episode return; raw designer reward).
    pub reward: f64,
    /// Group key of the advantage.
    pub group: String,
    /// Advantage, set by [`assign_advantages`].
    #[serde(default)]
    pub advantage: f64,
    /// Policy version of the weights that sampled it (staleness metric), when known.
    #[serde(default)]
    pub policy_version: Option<i64>,
}

impl Sample {
    /// Trained tokens (the first token can never be scored, so it never counts).
    pub fn trained_tokens(&self) -> usize {
        self.mask.iter().skip(1).filter(|&&m| m != 0).count()
    }
}

/// How designer samples are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DesignerGroup {
    Skill,
    Doc,
}

impl std::str::FromStr for DesignerGroup {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "skill" => Ok(DesignerGroup::Skill),
            "doc" | "document" => Ok(DesignerGroup::Doc),
            _ => Err(format!("unknown designer grouping {s:?} (skill | doc)")),
        }
    }
}

/// Counts of rows read and left out, for the metrics.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReadStats {
    pub rows: usize,
    /// Rows left out before grouping (status ≠ ok; unscored, unplayed or empty designer samples).
    pub skipped: usize,
    pub skipped_by_reason: std::collections::BTreeMap<String, usize>,
}

impl ReadStats {
    fn skip(&mut self, why: &str) {
        self.skipped += 1;
        *self.skipped_by_reason.entry(why.to_string()).or_default() += 1;
    }
}

/// The columns of a `rollouts` row the agent batch reads (`status` and `policy_version` may be
/// absent; a missing `status` means ok).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct EpisodeIn {
    pub env_id: String,
    pub arm: Arm,
    pub status: Option<Status>,
    pub r#return: f64,
    pub token_ids: Vec<Option<i64>>,
    pub loss_mask: Vec<Option<u8>>,
    pub logprobs: Vec<Option<f32>>,
    pub temperature: f32,
    pub policy_version: Option<i64>,
}

/// The columns of a `candidates` row the designer batch reads.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct DesignIn {
    pub candidate_id: String,
    pub skill: Option<String>,
    pub doc_id: Option<String>,
    pub prompt_ids: Vec<Option<i64>>,
    pub response_ids: Vec<Option<i64>>,
    pub response_logprobs: Vec<Option<f32>>,
    pub temperature: f32,
    pub policy_version: Option<i64>,
}

/// The columns of a `scores` row the designer batch reads.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ScoreIn {
    pub candidate_id: String,
    pub designer_reward: f64,
    pub reward_kind: Option<RewardKind>,
}

/// Which input table a [`RowError`] of [`designer_samples`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DesignerInput {
    Candidates,
    Scores,
}

fn tokens(v: &[Option<i64>], i: usize, col: &'static str) -> Result<Vec<u32>, RowError> {
    v.iter()
        .map(|t| match t {
            None => Err(RowError::new(i, col, "has a null token")),
            Some(t) => u32::try_from(*t).map_err(|_| RowError::new(i, col, format!("negative token id {t}"))),
        })
        .collect()
}

fn floats(v: &[Option<f32>]) -> Vec<f32> {
    v.iter().map(|x| x.unwrap_or(0.0)).collect()
}

fn check_temperature(i: usize, t: f32) -> Result<(), RowError> {
    if !t.is_finite() || t < 0.0 {
        return Err(RowError::new(i, "temperature", format!("{t} is not a temperature ≥ 0")));
    }
    Ok(())
}

/// Agent episodes: `status` = ok only, grouped per (`env_id`, `arm`), keeping only the episodes
/// of `arms` when given (others are skipped as `arm=<name>`): the agent learns from its no-hint
/// plays by default, the hint plays measuring regret.
pub fn agent_samples(rows: &[EpisodeIn], arms: Option<&[Arm]>) -> Result<(Vec<Sample>, ReadStats), RowError> {
    let mut out = Vec::new();
    let mut st = ReadStats::default();
    for (i, row) in rows.iter().enumerate() {
        st.rows += 1;
        let status = row.status.unwrap_or_default();
        if status != Status::Ok {
            st.skip(&format!("status={status}"));
            continue;
        }
        if arms.is_some_and(|keep| !keep.contains(&row.arm)) {
            st.skip(&format!("arm={}", row.arm));
            continue;
        }
        let tokens = tokens(&row.token_ids, i, "token_ids")?;
        let m: Vec<u8> = row.loss_mask.iter().map(|m| u8::from(m.is_some_and(|m| m != 0))).collect();
        let behaviour = floats(&row.logprobs);
        if m.len() != tokens.len() {
            return Err(RowError::new(i, "loss_mask", format!("has {} entries, token_ids {}", m.len(), tokens.len())));
        }
        if behaviour.len() != tokens.len() {
            return Err(RowError::new(i, "logprobs", format!("has {} entries, token_ids {}", behaviour.len(), tokens.len())));
        }
        let r = row.r#return;
        if !r.is_finite() {
            return Err(RowError::new(i, "return", format!("{r} is not finite")));
        }
        check_temperature(i, row.temperature)?;
        let sample = Sample {
            role: Role::Agent,
            tokens,
            mask: m,
            behaviour,
            temperature: row.temperature,
            reward: r,
            group: format!("{}\u{1f}{}", row.env_id, row.arm),
            advantage: 0.0,
            policy_version: row.policy_version,
        };
        if sample.trained_tokens() == 0 {
            st.skip("no trained token");
            continue;
        }
        out.push(sample);
    }
    Ok((out, st))
}

/// Designer samples: candidates joined with scores on `candidate_id`; the sequence is
/// `prompt_ids + response_ids`, the response trained. Candidates without a score row, or whose
/// `reward_kind` is `unplayed`, are not trained.
pub fn designer_samples(
    candidates: &[DesignIn],
    scores: &[ScoreIn],
    group: DesignerGroup,
) -> Result<(Vec<Sample>, ReadStats), (DesignerInput, RowError)> {
    let mut st = ReadStats::default();
    let mut reward: HashMap<&str, (f64, Option<RewardKind>)> = HashMap::new();
    for (i, row) in scores.iter().enumerate() {
        let err = |column, msg| (DesignerInput::Scores, RowError::new(i, column, msg));
        let v = row.designer_reward;
        if !v.is_finite() {
            return Err(err("designer_reward", format!("{v} is not finite")));
        }
        if reward.insert(&row.candidate_id, (v, row.reward_kind)).is_some() {
            return Err(err("candidate_id", format!("duplicate candidate_id {:?}", row.candidate_id)));
        }
    }
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for (i, row) in candidates.iter().enumerate() {
        let err = |e: RowError| (DesignerInput::Candidates, e);
        st.rows += 1;
        let cid = &row.candidate_id;
        if !seen.insert(cid.clone()) {
            return Err(err(RowError::new(i, "candidate_id", format!("duplicate candidate_id {cid:?}"))));
        }
        let Some((r, kind)) = reward.get(cid.as_str()).copied() else {
            st.skip("unscored");
            continue;
        };
        if kind == Some(RewardKind::Unplayed) {
            st.skip("unplayed");
            continue;
        }
        let p = tokens(&row.prompt_ids, i, "prompt_ids").map_err(err)?;
        let c = tokens(&row.response_ids, i, "response_ids").map_err(err)?;
        let lp = floats(&row.response_logprobs);
        if lp.len() != c.len() {
            return Err(err(RowError::new(i, "response_logprobs", format!("has {} entries, response_ids {}", lp.len(), c.len()))));
        }
        if p.is_empty() || c.is_empty() {
            st.skip("empty prompt or response");
            continue;
        }
        check_temperature(i, row.temperature).map_err(err)?;
        let key = match group {
            DesignerGroup::Skill => row.skill.clone().ok_or_else(|| err(RowError::new(i, "skill", "is null")))?,
            DesignerGroup::Doc => row.doc_id.clone().unwrap_or_else(|| "\u{1f}no-doc".into()),
        };
        let n = p.len();
        let mut mask = vec![0u8; n];
        mask.extend(std::iter::repeat_n(1u8, c.len()));
        let mut behaviour = vec![0f32; n];
        behaviour.extend(lp);
        let mut tokens = p;
        tokens.extend(c);
        out.push(Sample {
            role: Role::Designer,
            tokens,
            mask,
            behaviour,
            temperature: row.temperature,
            reward: r,
            group: key,
            advantage: 0.0,
            policy_version: row.policy_version,
        });
    }
    Ok((out, st))
}

/// How each role's rewards become advantages.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AdvantageConfig {
    pub agent_norm: Norm,
    pub designer_norm: Norm,
    pub designer_scale: f64,
}

impl Default for AdvantageConfig {
    fn default() -> Self {
        AdvantageConfig { agent_norm: Norm::Std, designer_norm: Norm::Center, designer_scale: 1.0 }
    }
}

/// Set advantages per role (each normalised on its own), dropping samples of zero-variance
/// groups. Returns the kept samples and the group statistics per role.
pub fn assign_advantages(samples: Vec<Sample>, cfg: &AdvantageConfig) -> (Vec<Sample>, GroupStats, GroupStats) {
    let mut kept = Vec::new();
    let mut stats = [GroupStats::default(), GroupStats::default()];
    for (k, role) in [Role::Agent, Role::Designer].into_iter().enumerate() {
        let idx: Vec<usize> = (0..samples.len()).filter(|&i| samples[i].role == role).collect();
        let r: Vec<f64> = idx.iter().map(|&i| samples[i].reward).collect();
        let keys: Vec<String> = idx.iter().map(|&i| samples[i].group.clone()).collect();
        let (norm, scale) = match role {
            Role::Agent => (cfg.agent_norm, 1.0),
            Role::Designer => (cfg.designer_norm, cfg.designer_scale),
        };
        let (adv, st) = group_advantages(&r, &keys, norm, scale);
        stats[k] = st;
        for (j, &i) in idx.iter().enumerate() {
            if let Some(a) = adv[j] {
                let mut s = samples[i].clone();
                s.advantage = a;
                kept.push(s);
            }
        }
    }
    let [a, d] = stats;
    (kept, a, d)
}
