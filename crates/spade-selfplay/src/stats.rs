//! Summary statistics for metrics lines, and pool diversity (n-gram Vendi score / n).

use std::collections::HashMap;

use serde_json::{json, Value};

/// count, mean, std (population), min, quartiles, max of a sample; `{"count": 0}` when empty.
pub fn summary(xs: &[f64]) -> Value {
    if xs.is_empty() {
        return json!({"count": 0});
    }
    let mut v: Vec<f64> = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    let q = |p: f64| {
        let pos = p * (v.len() - 1) as f64;
        let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
        v[lo] + (v[hi] - v[lo]) * (pos - lo as f64)
    };
    json!({"count": v.len(), "mean": mean, "std": var.sqrt(), "min": v[0], "p25": q(0.25), "p50": q(0.5), "p75": q(0.75), "max": v[v.len() - 1]})
}

fn ngrams(code: &str, n: usize) -> HashMap<String, f64> {
    let toks: Vec<&str> = code.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|t| !t.is_empty()).collect();
    let mut m = HashMap::new();
    if toks.len() < n {
        if !toks.is_empty() {
            *m.entry(toks.join(" ")).or_insert(0.0) += 1.0;
        }
        return m;
    }
    for w in toks.windows(n) {
        *m.entry(w.join(" ")).or_insert(0.0) += 1.0;
    }
    m
}

/// Vendi score / n of a set of programs: the exponential of the Shannon entropy of the eigenvalues
/// of K/n, K the cosine similarity of token 3-gram count vectors; 1/n (all identical) … 1 (all
/// dissimilar). The paper's collapse signal. `None` for an empty set.
pub fn vendi_per_n(codes: &[&str]) -> Option<f64> {
    let n = codes.len();
    if n == 0 {
        return None;
    }
    let grams: Vec<HashMap<String, f64>> = codes.iter().map(|c| ngrams(c, 3)).collect();
    let norms: Vec<f64> = grams.iter().map(|g| g.values().map(|v| v * v).sum::<f64>().sqrt()).collect();
    let mut k = nalgebra::DMatrix::<f64>::zeros(n, n);
    for i in 0..n {
        for j in i..n {
            let s = if i == j {
                1.0
            } else if norms[i] == 0.0 || norms[j] == 0.0 {
                0.0
            } else {
                let (a, b) = if grams[i].len() <= grams[j].len() { (&grams[i], &grams[j]) } else { (&grams[j], &grams[i]) };
                a.iter().map(|(g, x)| x * b.get(g).copied().unwrap_or(0.0)).sum::<f64>() / (norms[i] * norms[j])
            };
            k[(i, j)] = s / n as f64;
            k[(j, i)] = s / n as f64;
        }
    }
    let eig = nalgebra::SymmetricEigen::new(k).eigenvalues;
    let h: f64 = eig.iter().filter(|&&l| l > 1e-12).map(|&l| -l * l.ln()).sum();
    Some(h.exp() / n as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_numbers() {
        let s = summary(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(s["count"], 4);
        assert_eq!(s["mean"], 2.5);
        assert_eq!(s["p50"], 2.5);
        assert_eq!(s["min"], 1.0);
        assert!((s["std"].as_f64().unwrap() - 1.25f64.sqrt()).abs() < 1e-12);
        assert_eq!(summary(&[])["count"], 0);
    }

    #[test]
    fn vendi_collapse_and_spread() {
        let a = "def step(self, action): return obs, reward, done";
        let b = "class Maze: rotate the grid left and right until solved";
        let c = "import random; seed = 3; numbers = sorted(values)";
        let same = vendi_per_n(&[a, a, a, a]).unwrap();
        assert!((same - 0.25).abs() < 1e-9, "{same}");
        let spread = vendi_per_n(&[a, b, c]).unwrap();
        assert!((spread - 1.0).abs() < 1e-9, "{spread}");
        assert_eq!(vendi_per_n(&[]), None);
    }
}
