//! Typed rows: one struct per table, its fields the table's columns (an `Option` where the column
//! is nullable), converted to and from record batches by [`Table::batch`] and
//! `spade_io::Batch::rows` through `serde_arrow` against the table's own schema. A reader that needs
//! only some columns declares its own struct with those fields (see `spade_io::Batch::rows`).

use serde::{Deserialize, Deserializer, Serialize};

use crate::domain::{Arm, Label, RewardKind, Setting, Status};

/// A value that may be null in a table: the type's default then (a count 0, the label `none`).
fn null_as_default<'de, D: Deserializer<'de>, T: Deserialize<'de> + Default>(d: D) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// An environment's setting as a table cell, read leniently ([`Setting::parse`]: any case, and
/// `games` for an unknown value), as seed headers are.
fn lenient_setting<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Setting>, D::Error> {
    Ok(Option::<String>::deserialize(d)?.map(|s| Setting::parse(Some(&s))))
}

/// A `docs` row.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DocRow {
    pub doc_id: String,
    pub domain: Option<String>,
    pub source: Option<String>,
    pub text: String,
    pub words: i32,
    pub truncated: bool,
}

/// A `candidates` row: one designer sample.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CandidateRow {
    pub candidate_id: String,
    pub round: i64,
    pub doc_id: Option<String>,
    pub sample: i32,
    pub skill: String,
    pub setting: Setting,
    pub code: Option<String>,
    pub final_code: Option<String>,
    pub hint: Option<String>,
    pub skill_tags: Vec<String>,
    pub parse_error: Option<String>,
    pub env_id: Option<String>,
    pub attempts: i32,
    pub prompt_ids: Vec<u32>,
    pub response_ids: Vec<u32>,
    pub response_logprobs: Vec<f32>,
    pub response_text: String,
    pub finish: String,
    pub repair_errors: Option<Vec<String>>,
    pub hint_prompt_ids: Option<Vec<u32>>,
    pub hint_response_ids: Option<Vec<u32>>,
    pub hint_response_logprobs: Option<Vec<f32>>,
    pub hint_temperature: Option<f32>,
    pub policy_version: i64,
    pub temperature: f32,
}

/// An `envs` row: a validated environment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EnvRow {
    pub candidate_id: Option<String>,
    pub env_id: String,
    pub code: String,
    pub hint: Option<String>,
    pub skill: Option<String>,
    #[serde(default, deserialize_with = "lenient_setting")]
    pub setting: Option<Setting>,
    pub source: Option<String>,
    pub solver: Option<String>,
}

/// A `rejects` row: a candidate that failed validation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RejectRow {
    pub candidate_id: Option<String>,
    pub env_id: Option<String>,
    pub code: Option<String>,
    pub hint: Option<String>,
    pub skill: Option<String>,
    pub setting: Option<Setting>,
    pub stage: String,
    pub status: String,
    pub error: String,
    pub validity: f64,
}

/// A `rollouts` row: one episode.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RolloutRow {
    pub env_id: String,
    pub arm: Arm,
    pub episode: i32,
    pub seed: i64,
    pub r#return: f64,
    pub raw_return: f64,
    pub success: bool,
    pub turns: i32,
    pub status: Status,
    pub termination: String,
    pub token_ids: Vec<u32>,
    pub loss_mask: Vec<u8>,
    pub logprobs: Vec<f32>,
    pub transcript: String,
    pub skill: Option<String>,
    pub policy_version: i64,
    pub round: i64,
    pub step: i32,
    pub temperature: f32,
}

/// A `scores` row: one candidate (or environment) scored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScoreRow {
    pub candidate_id: Option<String>,
    pub env_id: Option<String>,
    pub doc_id: Option<String>,
    pub skill: Option<String>,
    pub round: i64,
    pub valid: bool,
    pub plays_hint: i64,
    pub plays_nohint: i64,
    pub failures: i64,
    pub validity: Option<f64>,
    pub hint_win_rate: Option<f64>,
    pub nohint_win_rate: Option<f64>,
    pub regret: Option<f64>,
    pub designer_reward: f64,
    pub reward_kind: RewardKind,
    pub repairs: Option<i32>,
}

/// A `memory` row: one environment of the memory. Only `env_id` and `code` must be present to read
/// one: counts default to 0 and the label to `none`, whether the column is absent or the cell null.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryRow {
    pub env_id: String,
    pub code: String,
    pub hint: Option<String>,
    pub skill: Option<String>,
    #[serde(default, deserialize_with = "lenient_setting")]
    pub setting: Option<Setting>,
    pub candidate_id: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub first_round: i64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub last_round: i64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub plays_hint: i64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub sum_hint: f64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub plays_nohint: i64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub sum_nohint: f64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub wins_hint: i64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub wins_nohint: i64,
    #[serde(default, deserialize_with = "null_as_default")]
    pub failures: i64,
    pub regret: Option<f64>,
    pub nohint_win_rate: Option<f64>,
    pub designer_reward: Option<f64>,
    #[serde(default, deserialize_with = "null_as_default")]
    pub label: Label,
    pub lp_fast: Option<f64>,
    pub lp_slow: Option<f64>,
    pub history: Option<String>,
    pub solver: Option<String>,
}

/// An `eval` row: one held-out item and sample.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EvalRow {
    pub suite: String,
    pub family: Option<String>,
    pub task: String,
    pub item_id: String,
    pub sample: i32,
    pub prompt: String,
    pub response: String,
    pub answer: Option<String>,
    pub score: f64,
    pub status: String,
    pub policy_version: i64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::*;

    /// Every table's row struct fills every column of its contract, and reads back equal.
    fn round_trip<R: Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(table: Table, row: R) {
        let batch = table.batch(std::slice::from_ref(&row)).unwrap();
        assert_eq!(batch.schema(), table.schema(), "{}", table.name);
        let back: Vec<R> = serde_arrow::from_record_batch(&batch).unwrap();
        assert_eq!(back, vec![row], "{}", table.name);
    }

    #[test]
    fn every_row_struct_is_its_table() {
        round_trip(DOCS, DocRow { doc_id: "d".into(), text: "t".into(), words: 1, ..Default::default() });
        round_trip(
            CANDIDATES,
            CandidateRow {
                setting: Setting::ToolUse,
                prompt_ids: vec![1, 2],
                response_logprobs: vec![-0.5],
                repair_errors: Some(vec!["e".into()]),
                hint_temperature: Some(0.7),
                ..Default::default()
            },
        );
        round_trip(ENVS, EnvRow { env_id: "e".into(), setting: Some(Setting::Games), ..Default::default() });
        round_trip(REJECTS, RejectRow { stage: "probe".into(), validity: 0.5, ..Default::default() });
        round_trip(ROLLOUTS, RolloutRow { arm: Arm::NoHint, r#return: 1.0, token_ids: vec![3, 4], loss_mask: vec![0, 1], ..Default::default() });
        round_trip(SCORES, ScoreRow { reward_kind: RewardKind::HintLeak, repairs: Some(2), ..Default::default() });
        round_trip(MEMORY, MemoryRow { label: Label::TooEasy, lp_fast: Some(0.25), ..Default::default() });
        round_trip(EVAL, EvalRow { suite: "humaneval".into(), score: 1.0, ..Default::default() });
    }

    #[test]
    fn a_row_missing_a_required_column_is_an_error_naming_the_table() {
        #[derive(Serialize)]
        struct Thin {
            env_id: String,
        }
        let e = ENVS.batch(&[Thin { env_id: "e".into() }]).unwrap_err();
        assert!(e.starts_with("table `envs`: "), "{e}");
    }
}
