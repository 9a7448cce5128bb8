//! Summaries per suite and per family: avg@k (mean score), pass@k (share of items with a
//! sample scoring 1), the standard error of the mean (over items: the sample standard deviation of
//! the items' mean scores over √items), the standard error with the items fixed (from the spread
//! of each item's samples), scoring failures.

use std::collections::BTreeMap;

use serde::Serialize;

/// One scored row, as summaries need it.
#[derive(Clone, Debug)]
pub struct Scored<'a> {
    pub suite: &'a str,
    pub family: &'a str,
    /// Stable item key, unique across suites and tasks.
    pub item: &'a str,
    pub score: f64,
    pub ok: bool,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SummaryRow {
    /// `suite` or `family` rows.
    pub level: String,
    pub name: String,
    pub items: usize,
    pub samples: usize,
    /// Mean score over all samples (avg@k).
    pub mean: f64,
    /// Standard error of `mean`, over items (0 with fewer than two items): items drawn from a
    /// population of items.
    pub stderr: f64,
    /// Standard error of `mean` with the items fixed and their samples (an environment's episodes on
    /// other seeds, or sampled answers) the random draw: √(Σ s²ᵢ/nᵢ)/K over the K items' sample
    /// variances s²ᵢ (items with one sample add nothing). The error a comparison of two models on
    /// the same items needs; 0 when no item has two samples.
    pub stderr_within: f64,
    /// Share of items with at least one sample scoring 1.0 (pass@k, k = samples per item).
    pub pass_at_k: f64,
    /// Samples whose scoring failed (status not `ok`), scored 0.
    pub errors: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub k: usize,
    pub rows: Vec<SummaryRow>,
}

#[derive(Default)]
struct Acc {
    sum: f64,
    samples: usize,
    errors: usize,
    /// Per item: best score, sum of scores, samples, sum of squared scores.
    items: BTreeMap<String, (f64, f64, usize, f64)>,
}

impl Acc {
    fn stderr(&self) -> f64 {
        let n = self.items.len();
        if n < 2 {
            return 0.0;
        }
        let means: Vec<f64> = self.items.values().map(|(_, s, k, _)| s / *k as f64).collect();
        let m = means.iter().sum::<f64>() / n as f64;
        let var = means.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1) as f64;
        (var / n as f64).sqrt()
    }

    fn stderr_within(&self) -> f64 {
        let k = self.items.len();
        let var_of_mean: f64 = self
            .items
            .values()
            .filter(|(_, _, n, _)| *n >= 2)
            .map(|(_, s, n, ss)| {
                let n = *n as f64;
                ((ss - s * s / n) / (n - 1.0)).max(0.0) / n
            })
            .sum();
        if k == 0 {
            0.0
        } else {
            var_of_mean.sqrt() / k as f64
        }
    }
}

/// Summarise per suite (in first-seen order) and per family.
pub fn summarize(rows: &[Scored], k: usize, note: impl Fn(&str) -> Option<&'static str>) -> Summary {
    let mut order: Vec<(String, String)> = Vec::new();
    let mut accs: BTreeMap<(String, String), Acc> = BTreeMap::new();
    for r in rows {
        for key in [("suite".to_string(), r.suite.to_string()), ("family".to_string(), r.family.to_string())] {
            if !accs.contains_key(&key) {
                order.push(key.clone());
            }
            let a = accs.entry(key).or_default();
            a.sum += r.score;
            a.samples += 1;
            a.errors += usize::from(!r.ok);
            let it = a.items.entry(r.item.to_string()).or_insert((0.0, 0.0, 0, 0.0));
            it.0 = it.0.max(r.score);
            it.1 += r.score;
            it.2 += 1;
            it.3 += r.score * r.score;
        }
    }
    order.sort_by_key(|(level, _)| level != "suite");
    let rows = order
        .into_iter()
        .map(|key| {
            let a = &accs[&key];
            let items = a.items.len();
            SummaryRow {
                note: if key.0 == "suite" { note(&key.1).map(str::to_string) } else { None },
                level: key.0,
                name: key.1,
                items,
                samples: a.samples,
                mean: if a.samples > 0 { a.sum / a.samples as f64 } else { 0.0 },
                stderr: a.stderr(),
                stderr_within: a.stderr_within(),
                pass_at_k: if items > 0 { a.items.values().filter(|(best, _, _, _)| *best >= 1.0).count() as f64 / items as f64 } else { 0.0 },
                errors: a.errors,
            }
        })
        .collect();
    Summary { k, rows }
}

impl Summary {
    /// A plain-text table (`±se|fixed`: `stderr_within`).
    pub fn table(&self) -> String {
        let mut s = format!(
            "{:<7} {:<14} {:>6} {:>8} {:>8} {:>7} {:>9} {:>8} {:>7}\n",
            "level",
            "name",
            "items",
            "samples",
            format!("avg@{}", self.k),
            "±se",
            "±se|fixed",
            format!("pass@{}", self.k),
            "errors"
        );
        for r in &self.rows {
            s.push_str(&format!(
                "{:<7} {:<14} {:>6} {:>8} {:>8.3} {:>7.3} {:>9.3} {:>8.3} {:>7}{}\n",
                r.level,
                r.name,
                r.items,
                r.samples,
                r.mean,
                r.stderr,
                r.stderr_within,
                r.pass_at_k,
                r.errors,
                r.note.as_deref().map(|n| format!("  ({n})")).unwrap_or_default()
            ));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn avg_and_pass_at_k() {
        let rows = [
            Scored { suite: "humaneval", family: "code", item: "a", score: 1.0, ok: true },
            Scored { suite: "humaneval", family: "code", item: "a", score: 0.0, ok: true },
            Scored { suite: "humaneval", family: "code", item: "b", score: 0.0, ok: false },
            Scored { suite: "humaneval", family: "code", item: "b", score: 0.0, ok: true },
        ];
        let s = summarize(&rows, 2, |_| None);
        assert_eq!(s.rows.len(), 2);
        let r = &s.rows[0];
        assert_eq!((r.level.as_str(), r.items, r.samples, r.errors), ("suite", 2, 4, 1));
        assert_eq!((r.mean, r.pass_at_k), (0.25, 0.5));
        // Item means 0.5 and 0: sd 0.3536, over √2.
        assert!((r.stderr - 0.25).abs() < 1e-12, "{}", r.stderr);
        // Items fixed: a's samples {1, 0} have variance 0.5, b's {0, 0} none: √(0.5/2)/2.
        assert!((r.stderr_within - 0.25).abs() < 1e-12, "{}", r.stderr_within);
        // Items that differ but whose samples agree: all of the error is between items.
        let rows = [
            Scored { suite: "envs:x", family: "envs", item: "a", score: 1.0, ok: true },
            Scored { suite: "envs:x", family: "envs", item: "a", score: 1.0, ok: true },
            Scored { suite: "envs:x", family: "envs", item: "b", score: 0.0, ok: true },
            Scored { suite: "envs:x", family: "envs", item: "b", score: 0.0, ok: true },
        ];
        let r = &summarize(&rows, 2, |_| None).rows[0];
        assert!((r.stderr - 0.5).abs() < 1e-12 && r.stderr_within == 0.0, "{r:?}");
        assert!(s.table().contains("pass@2"));
    }
}
