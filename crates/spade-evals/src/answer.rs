//! Answers to the items and what becomes of them: where they come from (the model, each item's
//! reference answer, another system's responses; BFCL episodes: [`crate::bfcl::play`]), their
//! scoring in the sandbox, the `eval` rows and the summary.

use std::collections::HashMap;

use indicatif::ProgressBar;
use serde::Deserialize;
use spade_model::{GenerationRequest, Generator, SamplingParams};
use spade_schema::{EvalRow, RowError};

use crate::score::{ScoreOut, ScoreReq};
use crate::summary::{summarize, Scored, Summary};
use crate::{suite_note, Item, Scorer};

/// A progress bar for `len` steps, labelled (the stage's, hidden or on stderr).
pub type Bar<'a> = &'a dyn Fn(u64, &str) -> ProgressBar;

/// One response to score: item index, sample, text; `verdict` is set when there is nothing to
/// score (a bfcl-mt episode that could not be played to its end, an environment's return).
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    pub item: usize,
    pub sample: i32,
    pub response: String,
    pub verdict: Option<ScoreOut>,
}

impl Answer {
    pub fn new(item: usize, sample: i32, response: String) -> Answer {
        Answer { item, sample, response, verdict: None }
    }
}

/// How the model answers: its sampling parameters (`max_new_tokens` per reply), samples per item,
/// and the run's seed (each generation's seed: [`Item::generation_seed`]).
#[derive(Clone, Debug)]
pub struct Sampling {
    pub params: SamplingParams,
    pub samples: usize,
    pub seed: u64,
}

/// Every item's reference answer (as sample 0), and the keys of the items that have none.
pub fn self_check(items: &[Item]) -> (Vec<Answer>, Vec<String>) {
    let mut unchecked = Vec::new();
    let mut out = Vec::new();
    for (i, it) in items.iter().enumerate() {
        match &it.reference {
            Some(r) => out.push(Answer::new(i, 0, r.clone())),
            None => unchecked.push(it.key()),
        }
    }
    (out, unchecked)
}

/// One response of another system, read by the `eval` table's contract.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct ResponseRow {
    pub suite: String,
    pub task: String,
    pub item_id: String,
    /// A null response is empty; the column itself must be there (no `Option` default).
    #[serde(deserialize_with = "Option::deserialize")]
    pub response: Option<String>,
    /// 0 when absent or null.
    pub sample: Option<i32>,
}

/// The answers of another system: every row must name one of `items`.
pub fn from_responses(items: &[Item], rows: &[ResponseRow]) -> Result<Vec<Answer>, RowError> {
    let index: HashMap<(&str, &str, &str), usize> =
        items.iter().enumerate().map(|(i, it)| ((it.suite.as_str(), it.task.as_str(), it.item_id.as_str()), i)).collect();
    rows.iter()
        .enumerate()
        .map(|(r, row)| {
            let key = (row.suite.as_str(), row.task.as_str(), row.item_id.as_str());
            let Some(&i) = index.get(&key) else {
                let msg = format!("no item {}/{}/{} in the loaded suites (check --suite, --n, --seed)", key.0, key.1, key.2);
                return Err(RowError::new(r, "item_id", msg));
            };
            Ok(Answer::new(i, row.sample.unwrap_or(0), row.response.clone().unwrap_or_default()))
        })
        .collect()
}

/// `samples` responses of the model to every item that is not played (see [`Item::is_played`]),
/// in no particular order.
pub fn generate(generator: &dyn Generator, items: &[Item], sampling: &Sampling, bar: Bar) -> anyhow::Result<Vec<Answer>> {
    let model = generator.model();
    let mut reqs = Vec::new();
    let mut keys = Vec::new();
    for (i, it) in items.iter().enumerate().filter(|(_, it)| !it.is_played()) {
        let prompt = model.encode_chat(&crate::chat(&it.prompt), true)?;
        for s in 0..sampling.samples {
            reqs.push(GenerationRequest { prompt: prompt.clone(), seed: it.generation_seed(sampling.seed, s, 0) });
            keys.push((i, s as i32));
        }
    }
    // Similar lengths together, an item's samples side by side (they share their prompt's prefill).
    let mut order: Vec<usize> = (0..reqs.len()).collect();
    order.sort_by_key(|&i| reqs[i].prompt.len());
    let reqs: Vec<GenerationRequest> = order.iter().map(|&i| reqs[i].clone()).collect();
    let pb = bar(reqs.len() as u64, "generating");
    let gens = generator.generate_with_progress(&reqs, &sampling.params, &mut |n| pb.inc(n as u64))?;
    pb.finish_and_clear();
    Ok(gens
        .into_iter()
        .zip(&order)
        .map(|(g, &o)| {
            let (item, sample) = keys[o];
            Answer::new(item, sample, g.text)
        })
        .collect())
}

/// Score the answers without a verdict in the sandbox, each by its suite's verifier; every
/// answer's verdict, in order.
pub fn score(scorer: &Scorer, items: &[Item], answers: &[Answer], bar: Bar) -> Vec<ScoreOut> {
    let reqs: Vec<ScoreReq> = answers
        .iter()
        .filter(|a| a.verdict.is_none())
        .map(|a| {
            let it = &items[a.item];
            ScoreReq {
                suite: it.suite.clone(),
                task: it.task.clone(),
                response: a.response.clone(),
                answer: it.answer.clone(),
                meta: it.meta.clone(),
            }
        })
        .collect();
    let pb = bar(reqs.len() as u64, "scoring");
    let scored = scorer.score(&reqs, &|n| pb.inc(n as u64));
    pb.finish_and_clear();
    // The scored verdicts, in order, fill the answers that had none.
    let mut scored = scored.into_iter();
    answers.iter().map(|a| a.verdict.clone().unwrap_or_else(|| scored.next().expect("one verdict per scored answer"))).collect()
}

/// The `eval` rows: one per answer, with its verdict.
pub fn rows(items: &[Item], answers: &[Answer], verdicts: &[ScoreOut], policy_version: i64) -> Vec<EvalRow> {
    answers
        .iter()
        .zip(verdicts)
        .map(|(a, v)| {
            let it = &items[a.item];
            EvalRow {
                suite: it.suite.clone(),
                family: Some(it.family.clone()),
                task: it.task.clone(),
                item_id: it.item_id.clone(),
                sample: a.sample,
                prompt: it.prompt_text(),
                response: a.response.clone(),
                answer: it.answer.clone(),
                score: v.score,
                status: v.status.clone(),
                policy_version,
            }
        })
        .collect()
}

/// The summary per suite and family of the answers and their verdicts, `k` samples per item,
/// with each suite's note ([`suite_note`]).
pub fn summary(items: &[Item], answers: &[Answer], verdicts: &[ScoreOut], k: usize) -> Summary {
    let keys: Vec<String> = items.iter().map(Item::key).collect();
    let scored: Vec<Scored> = answers
        .iter()
        .zip(verdicts)
        .map(|(a, v)| {
            let it = &items[a.item];
            Scored { suite: &it.suite, family: &it.family, item: &keys[a.item], score: v.score, ok: v.status == "ok" }
        })
        .collect();
    summarize(&scored, k, suite_note)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(task: &str, id: &str, reference: Option<&str>) -> Item {
        Item {
            suite: "rg:math".into(),
            family: "math".into(),
            task: task.into(),
            item_id: id.into(),
            prompt: vec![crate::Message { role: "user".into(), content: "q".into() }],
            answer: Some("1".into()),
            reference: reference.map(Into::into),
            meta: serde_json::json!({}),
        }
    }

    fn row(id: &str, response: Option<&str>, sample: Option<i32>) -> ResponseRow {
        ResponseRow { suite: "rg:math".into(), task: "gcd".into(), item_id: id.into(), response: response.map(Into::into), sample }
    }

    #[test]
    fn self_check_answers_with_references_and_lists_the_rest() {
        let items = [item("gcd", "0", Some("<answer>1</answer>")), item("gcd", "1", None)];
        let (answers, unchecked) = self_check(&items);
        assert_eq!(answers, vec![Answer::new(0, 0, "<answer>1</answer>".into())]);
        assert_eq!(unchecked, vec!["rg:math/gcd/1"]);
    }

    #[test]
    fn responses_name_loaded_items_or_fail_at_their_row() {
        let items = [item("gcd", "0", None), item("gcd", "1", None)];
        let answers = from_responses(&items, &[row("1", Some("a"), Some(2)), row("0", None, None)]).unwrap();
        assert_eq!(answers, vec![Answer::new(1, 2, "a".into()), Answer::new(0, 0, String::new())]);
        let e = from_responses(&items, &[row("0", None, None), row("9", None, None)]).unwrap_err();
        assert_eq!((e.index, e.column), (1, "item_id"));
        assert!(e.msg.contains("rg:math/gcd/9"), "{e}");
    }

    #[test]
    fn rows_and_summary_carry_each_answers_verdict() {
        let items = [item("gcd", "0", None), item("gcd", "1", None)];
        let answers = [Answer::new(0, 0, "a".into()), Answer::new(1, 0, "b".into())];
        let verdicts = [ScoreOut { score: 1.0, status: "ok".into(), extracted: None }, ScoreOut::failed("timeout")];
        let rows = rows(&items, &answers, &verdicts, 3);
        assert_eq!((rows[0].score, rows[1].status.as_str(), rows[1].item_id.as_str()), (1.0, "timeout", "1"));
        assert!(rows.iter().all(|r| r.policy_version == 3 && r.family.as_deref() == Some("math") && r.prompt == "q"));
        spade_schema::EVAL.batch(&rows).unwrap();
        let s = summary(&items, &answers, &verdicts, 1);
        let suite = s.rows.iter().find(|r| r.level == "suite").unwrap();
        assert_eq!((suite.items, suite.errors, suite.mean), (2, 1, 0.5));
    }
}
