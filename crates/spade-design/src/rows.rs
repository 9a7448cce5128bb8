//! `candidates` rows: ids, per-sample seeds and the Arrow batch in the CANDIDATES contract.

use crate::hash_hex;

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

pub use spade_schema::CandidateRow;

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
                setting: spade_schema::Setting::Games,
                attempts: 1,
                finish: "eos".into(),
                ..Default::default()
            },
            CandidateRow {
                candidate_id: "b".into(),
                skill: "s".into(),
                setting: spade_schema::Setting::Games,
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
        let b = spade_schema::CANDIDATES.batch(&rows).unwrap();
        assert_eq!(b.num_rows(), 2);
        assert_eq!(b.schema(), spade_schema::CANDIDATES.schema());
    }
}
