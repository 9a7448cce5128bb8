//! The two training batches read from tables: agent episodes (`rollouts`) and designer samples
//! (`candidates` joined with `scores` on `candidate_id`), as token sequences with a loss mask,
//! behaviour log-probs aligned one-to-one, a temperature, a raw reward and a group key.

use std::collections::{HashMap, HashSet};

use anyhow::Context;
use arrow::array::{Array, Float32Array, Float64Array, Int32Array, Int64Array, ListArray, StringArray, UInt8Array};
use arrow::datatypes::{DataType, Field};
use serde::{Deserialize, Serialize};
use spade_io::{Batch, TableReader};

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

fn list(t: DataType) -> DataType {
    DataType::List(std::sync::Arc::new(Field::new("item", t, true)))
}

fn read(args: &[String]) -> anyhow::Result<Vec<Batch>> {
    if args.is_empty() {
        return Ok(Vec::new());
    }
    Ok(TableReader::open(args)?.read_all()?)
}

fn strs(b: &Batch, name: &str, required: bool) -> anyhow::Result<Option<StringArray>> {
    let a = if required { Some(b.required(name, &DataType::Utf8)?) } else { b.opt_column(name, &DataType::Utf8)? };
    Ok(a.map(|a| a.as_any().downcast_ref::<StringArray>().expect("utf8").clone()))
}

fn s(a: &Option<StringArray>, i: usize) -> Option<String> {
    a.as_ref().filter(|a| a.is_valid(i)).map(|a| a.value(i).to_string())
}

fn lists(b: &Batch, name: &str, item: DataType) -> anyhow::Result<ListArray> {
    let a = b.required(name, &list(item))?;
    Ok(a.as_any().downcast_ref::<ListArray>().expect("list").clone())
}

fn tokens(b: &Batch, l: &ListArray, i: usize, col: &str) -> anyhow::Result<Vec<u32>> {
    let v = l.value(i);
    let v = v.as_any().downcast_ref::<Int32Array>().expect("int32");
    if v.null_count() > 0 {
        return Err(b.row_error(i, col, "has a null token").into());
    }
    v.values().iter().map(|&t| u32::try_from(t).map_err(|_| anyhow::Error::from(b.row_error(i, col, format!("negative token id {t}"))))).collect()
}

fn floats(l: &ListArray, i: usize) -> Vec<f32> {
    let v = l.value(i);
    let v = v.as_any().downcast_ref::<Float32Array>().expect("float32");
    (0..v.len()).map(|j| if v.is_valid(j) { v.value(j) } else { 0.0 }).collect()
}

fn temperatures(b: &Batch) -> anyhow::Result<Float32Array> {
    let t = b.required("temperature", &DataType::Float32)?;
    Ok(t.as_any().downcast_ref::<Float32Array>().expect("f32").clone())
}

fn versions(b: &Batch) -> anyhow::Result<Option<Int64Array>> {
    Ok(b.opt_column("policy_version", &DataType::Int64)?.map(|a| a.as_any().downcast_ref::<Int64Array>().expect("i64").clone()))
}

fn check_temperature(b: &Batch, i: usize, t: f32) -> anyhow::Result<()> {
    if !t.is_finite() || t < 0.0 {
        return Err(b.row_error(i, "temperature", format!("{t} is not a temperature ≥ 0")).into());
    }
    Ok(())
}

/// Agent episodes from rollouts tables: `status` = ok only (a missing `status` column means ok),
/// grouped per (`env_id`, `arm`).
pub fn read_agent(paths: &[String]) -> anyhow::Result<(Vec<Sample>, ReadStats)> {
    read_agent_arms(paths, None)
}

/// [`read_agent`] keeping only the episodes of `arms` (others are skipped as `arm=<name>`): the
/// agent learns from its no-hint plays by default, the hint plays measuring regret.
pub fn read_agent_arms(paths: &[String], arms: Option<&[&str]>) -> anyhow::Result<(Vec<Sample>, ReadStats)> {
    let mut out = Vec::new();
    let mut st = ReadStats::default();
    for b in read(paths).context("agent batch")? {
        let env = strs(&b, "env_id", true)?.unwrap();
        let arm = strs(&b, "arm", true)?.unwrap();
        let status = strs(&b, "status", false)?;
        let ret = b.required("return", &DataType::Float64)?;
        let ret = ret.as_any().downcast_ref::<Float64Array>().unwrap().clone();
        let toks = lists(&b, "token_ids", DataType::Int32)?;
        let mask = lists(&b, "loss_mask", DataType::UInt8)?;
        let lps = lists(&b, "logprobs", DataType::Float32)?;
        let temp = temperatures(&b)?;
        let pv = versions(&b)?;
        for i in 0..b.num_rows() {
            st.rows += 1;
            let status = s(&status, i).unwrap_or_else(|| "ok".into());
            if status != "ok" {
                st.skip(&format!("status={status}"));
                continue;
            }
            if let Some(keep) = arms {
                if !keep.contains(&arm.value(i)) {
                    st.skip(&format!("arm={}", arm.value(i)));
                    continue;
                }
            }
            let tokens = tokens(&b, &toks, i, "token_ids")?;
            let m = mask.value(i);
            let m = m.as_any().downcast_ref::<UInt8Array>().unwrap();
            let m: Vec<u8> = (0..m.len()).map(|j| u8::from(m.is_valid(j) && m.value(j) != 0)).collect();
            let behaviour = floats(&lps, i);
            if m.len() != tokens.len() {
                return Err(b.row_error(i, "loss_mask", format!("has {} entries, token_ids {}", m.len(), tokens.len())).into());
            }
            if behaviour.len() != tokens.len() {
                return Err(b.row_error(i, "logprobs", format!("has {} entries, token_ids {}", behaviour.len(), tokens.len())).into());
            }
            let r = ret.value(i);
            if !r.is_finite() {
                return Err(b.row_error(i, "return", format!("{r} is not finite")).into());
            }
            let t = temp.value(i);
            check_temperature(&b, i, t)?;
            let sample = Sample {
                role: Role::Agent,
                tokens,
                mask: m,
                behaviour,
                temperature: t,
                reward: r,
                group: format!("{}\u{1f}{}", env.value(i), arm.value(i)),
                advantage: 0.0,
                policy_version: pv.as_ref().filter(|a| a.is_valid(i)).map(|a| a.value(i)),
            };
            if sample.trained_tokens() == 0 {
                st.skip("no trained token");
                continue;
            }
            out.push(sample);
        }
    }
    Ok((out, st))
}

/// Designer samples: candidates joined with scores on `candidate_id`; the sequence is
/// `prompt_ids + response_ids`, the response trained. Candidates without a score row, or whose
/// `reward_kind` is `unplayed`, are not trained.
pub fn read_designer(candidates: &[String], scores: &[String], group: DesignerGroup) -> anyhow::Result<(Vec<Sample>, ReadStats)> {
    let mut st = ReadStats::default();
    if candidates.is_empty() {
        return Ok((Vec::new(), st));
    }
    let mut reward: HashMap<String, (f64, Option<String>)> = HashMap::new();
    for b in read(scores).context("designer scores")? {
        let id = strs(&b, "candidate_id", true)?.unwrap();
        let r = b.required("designer_reward", &DataType::Float64)?;
        let r = r.as_any().downcast_ref::<Float64Array>().unwrap().clone();
        let kind = strs(&b, "reward_kind", false)?;
        for i in 0..b.num_rows() {
            let v = r.value(i);
            if !v.is_finite() {
                return Err(b.row_error(i, "designer_reward", format!("{v} is not finite")).into());
            }
            if reward.insert(id.value(i).to_string(), (v, s(&kind, i))).is_some() {
                return Err(b.row_error(i, "candidate_id", format!("duplicate candidate_id {:?}", id.value(i))).into());
            }
        }
    }
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for b in read(candidates).context("designer candidates")? {
        let id = strs(&b, "candidate_id", true)?.unwrap();
        let skill = strs(&b, "skill", group == DesignerGroup::Skill)?;
        let doc = strs(&b, "doc_id", false)?;
        let prompt = lists(&b, "prompt_ids", DataType::Int32)?;
        let resp = lists(&b, "response_ids", DataType::Int32)?;
        let lps = lists(&b, "response_logprobs", DataType::Float32)?;
        let temp = temperatures(&b)?;
        let pv = versions(&b)?;
        for i in 0..b.num_rows() {
            st.rows += 1;
            let cid = id.value(i).to_string();
            if !seen.insert(cid.clone()) {
                return Err(b.row_error(i, "candidate_id", format!("duplicate candidate_id {cid:?}")).into());
            }
            let Some((r, kind)) = reward.get(&cid).cloned() else {
                st.skip("unscored");
                continue;
            };
            if kind.as_deref() == Some("unplayed") {
                st.skip("unplayed");
                continue;
            }
            let p = tokens(&b, &prompt, i, "prompt_ids")?;
            let c = tokens(&b, &resp, i, "response_ids")?;
            let lp = floats(&lps, i);
            if lp.len() != c.len() {
                return Err(b.row_error(i, "response_logprobs", format!("has {} entries, response_ids {}", lp.len(), c.len())).into());
            }
            if p.is_empty() || c.is_empty() {
                st.skip("empty prompt or response");
                continue;
            }
            let t = temp.value(i);
            check_temperature(&b, i, t)?;
            let key = match group {
                DesignerGroup::Skill => s(&skill, i).unwrap_or_default(),
                DesignerGroup::Doc => s(&doc, i).unwrap_or_else(|| "\u{1f}no-doc".into()),
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
                temperature: t,
                reward: r,
                group: key,
                advantage: 0.0,
                policy_version: pv.as_ref().filter(|a| a.is_valid(i)).map(|a| a.value(i)),
            });
        }
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
