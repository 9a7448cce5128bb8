//! `candidates` rows: ids, per-sample seeds and the Arrow batch in the CANDIDATES contract.

use std::sync::Arc;

use arrow::array::{ArrayRef, Float32Builder, Int32Builder, Int64Builder, ListBuilder, RecordBatch, StringBuilder};
use spade_schema::CANDIDATES;

use crate::{hash_hex, Result};

/// Key of a document in ids: its `doc_id`, or `#i` (its index) when prompts have no document.
pub fn doc_key(doc_id: Option<&str>, index: usize) -> String {
    doc_id.map(|d| format!("doc:{d}")).unwrap_or_else(|| format!("#{index}"))
}

/// `candidate_id`: hash of (run seed, round, document key, sample index).
pub fn candidate_id(seed: u64, round: u64, doc_key: &str, sample: usize) -> String {
    hash_hex(&["candidate", &seed.to_string(), &round.to_string(), doc_key, &sample.to_string()])
}

/// The sampling seed of one designer sample (attempt 0 is the first response, then repairs, then
/// the hint call), from the same key as its `candidate_id`.
pub fn sample_seed(seed: u64, round: u64, doc_key: &str, sample: usize, purpose: &str) -> u64 {
    let h = hash_hex(&["sample-seed", &seed.to_string(), &round.to_string(), doc_key, &sample.to_string(), purpose]);
    u64::from_str_radix(&h, 16).expect("hex")
}

/// One designer sample, every column of the `candidates` contract.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CandidateRow {
    pub candidate_id: String,
    pub round: i64,
    pub doc_id: Option<String>,
    pub sample: i32,
    pub skill: String,
    pub setting: String,
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

fn tokens(rows: &[CandidateRow], f: impl Fn(&CandidateRow) -> Option<&Vec<u32>>) -> ArrayRef {
    let mut b = ListBuilder::new(Int32Builder::new());
    for r in rows {
        match f(r) {
            Some(v) => {
                b.values().append_slice(&v.iter().map(|&x| x as i32).collect::<Vec<_>>());
                b.append(true);
            }
            None => b.append(false),
        }
    }
    Arc::new(b.finish())
}

fn floats(rows: &[CandidateRow], f: impl Fn(&CandidateRow) -> Option<&Vec<f32>>) -> ArrayRef {
    let mut b = ListBuilder::new(Float32Builder::new());
    for r in rows {
        match f(r) {
            Some(v) => {
                b.values().append_slice(v);
                b.append(true);
            }
            None => b.append(false),
        }
    }
    Arc::new(b.finish())
}

fn strs(rows: &[CandidateRow], f: impl Fn(&CandidateRow) -> Option<&Vec<String>>) -> ArrayRef {
    let mut b = ListBuilder::new(StringBuilder::new());
    for r in rows {
        match f(r) {
            Some(v) => {
                for s in v {
                    b.values().append_value(s);
                }
                b.append(true);
            }
            None => b.append(false),
        }
    }
    Arc::new(b.finish())
}

fn text(rows: &[CandidateRow], f: impl Fn(&CandidateRow) -> Option<&str>) -> ArrayRef {
    let mut b = StringBuilder::new();
    for r in rows {
        b.append_option(f(r));
    }
    Arc::new(b.finish())
}

/// The rows as one batch with [`CANDIDATES`]' schema.
pub fn candidates_batch(rows: &[CandidateRow]) -> Result<RecordBatch> {
    let schema = CANDIDATES.schema();
    let mut cols: Vec<ArrayRef> = Vec::new();
    for field in schema.fields() {
        let a: ArrayRef = match field.name().as_str() {
            "candidate_id" => text(rows, |r| Some(&r.candidate_id)),
            "round" => {
                let mut b = Int64Builder::new();
                rows.iter().for_each(|r| b.append_value(r.round));
                Arc::new(b.finish())
            }
            "doc_id" => text(rows, |r| r.doc_id.as_deref()),
            "sample" => {
                let mut b = Int32Builder::new();
                rows.iter().for_each(|r| b.append_value(r.sample));
                Arc::new(b.finish())
            }
            "skill" => text(rows, |r| Some(&r.skill)),
            "setting" => text(rows, |r| Some(&r.setting)),
            "code" => text(rows, |r| r.code.as_deref()),
            "final_code" => text(rows, |r| r.final_code.as_deref()),
            "hint" => text(rows, |r| r.hint.as_deref()),
            "skill_tags" => strs(rows, |r| Some(&r.skill_tags)),
            "parse_error" => text(rows, |r| r.parse_error.as_deref()),
            "env_id" => text(rows, |r| r.env_id.as_deref()),
            "attempts" => {
                let mut b = Int32Builder::new();
                rows.iter().for_each(|r| b.append_value(r.attempts));
                Arc::new(b.finish())
            }
            "prompt_ids" => tokens(rows, |r| Some(&r.prompt_ids)),
            "response_ids" => tokens(rows, |r| Some(&r.response_ids)),
            "response_logprobs" => floats(rows, |r| Some(&r.response_logprobs)),
            "response_text" => text(rows, |r| Some(&r.response_text)),
            "finish" => text(rows, |r| Some(&r.finish)),
            "repair_errors" => strs(rows, |r| r.repair_errors.as_ref()),
            "hint_prompt_ids" => tokens(rows, |r| r.hint_prompt_ids.as_ref()),
            "hint_response_ids" => tokens(rows, |r| r.hint_response_ids.as_ref()),
            "hint_response_logprobs" => floats(rows, |r| r.hint_response_logprobs.as_ref()),
            "hint_temperature" => {
                let mut b = Float32Builder::new();
                rows.iter().for_each(|r| b.append_option(r.hint_temperature));
                Arc::new(b.finish())
            }
            "policy_version" => {
                let mut b = Int64Builder::new();
                rows.iter().for_each(|r| b.append_value(r.policy_version));
                Arc::new(b.finish())
            }
            "temperature" => {
                let mut b = Float32Builder::new();
                rows.iter().for_each(|r| b.append_value(r.temperature));
                Arc::new(b.finish())
            }
            other => return Err(crate::Error::Invalid(format!("candidates column `{other}` has no builder"))),
        };
        cols.push(a);
    }
    Ok(RecordBatch::try_new(schema, cols)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_distinct() {
        let a = candidate_id(1, 2, "doc:x", 0);
        assert_eq!(a, candidate_id(1, 2, "doc:x", 0));
        assert_eq!(a.len(), 16);
        assert_ne!(a, candidate_id(1, 2, "doc:x", 1));
        assert_ne!(a, candidate_id(1, 3, "doc:x", 0));
        assert_ne!(a, candidate_id(2, 2, "doc:x", 0));
        assert_ne!(sample_seed(1, 2, "doc:x", 0, "design"), sample_seed(1, 2, "doc:x", 0, "hint"));
    }

    #[test]
    fn batch_follows_the_contract() {
        let rows = vec![
            CandidateRow {
                candidate_id: "a".into(),
                skill: "s".into(),
                setting: "games".into(),
                attempts: 1,
                finish: "eos".into(),
                ..Default::default()
            },
            CandidateRow {
                candidate_id: "b".into(),
                skill: "s".into(),
                setting: "games".into(),
                attempts: 2,
                code: Some("c".into()),
                response_ids: vec![1, 2],
                response_logprobs: vec![-0.5, -1.0],
                hint_response_ids: Some(vec![3]),
                hint_response_logprobs: Some(vec![-0.1]),
                repair_errors: Some(vec!["syntax: x".into()]),
                finish: "length".into(),
                ..Default::default()
            },
        ];
        let b = candidates_batch(&rows).unwrap();
        assert_eq!(b.num_rows(), 2);
        assert_eq!(b.schema(), CANDIDATES.schema());
    }
}
