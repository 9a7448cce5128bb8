//! Group-relative advantages, computed per role (DESIGN: "`spade-grpo-step` computes all
//! advantages"). Agent episodes: `(r − mean) / (std + ε)` per (environment, arm), population std,
//! as the reference's `normalize_rewards_per_game`. Designer candidates: centred per skill (or per
//! document), optionally std-normalised, times a scale — the reference centres per skill without a
//! std division. A group whose rewards are all equal (a single member included) carries no signal:
//! it is dropped and counted.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How a role's rewards become advantages within a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Norm {
    /// `r − mean` (the reference's designer advantage).
    Center,
    /// `(r − mean) / (std + ε)`, population std (the reference's agent advantage).
    Std,
    /// The raw reward (no baseline; no group is dropped).
    None,
}

impl std::str::FromStr for Norm {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "center" | "centre" => Ok(Norm::Center),
            "std" => Ok(Norm::Std),
            "none" => Ok(Norm::None),
            _ => Err(format!("unknown normalisation {s:?} (center | std | none)")),
        }
    }
}

/// ε added to the std, as the reference.
pub const STD_EPS: f64 = 1e-8;

/// Outcome of normalising one role.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GroupStats {
    /// Groups seen.
    pub groups: usize,
    /// Groups dropped because all their rewards are equal.
    pub dropped_groups: usize,
    /// Samples in dropped groups.
    pub dropped_samples: usize,
}

/// Advantages of `rewards` grouped by `keys` (same length): `None` for a sample of a dropped group.
/// `scale` multiplies the result.
pub fn group_advantages(rewards: &[f64], keys: &[String], norm: Norm, scale: f64) -> (Vec<Option<f64>>, GroupStats) {
    assert_eq!(rewards.len(), keys.len());
    let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, k) in keys.iter().enumerate() {
        groups.entry(k.as_str()).or_default().push(i);
    }
    let mut out = vec![None; rewards.len()];
    let mut stats = GroupStats { groups: groups.len(), ..Default::default() };
    for idx in groups.values() {
        if norm == Norm::None {
            for &i in idx {
                out[i] = Some(rewards[i] * scale);
            }
            continue;
        }
        let n = idx.len() as f64;
        let mean = idx.iter().map(|&i| rewards[i]).sum::<f64>() / n;
        let var = idx.iter().map(|&i| (rewards[i] - mean).powi(2)).sum::<f64>() / n;
        let all_equal = idx.iter().all(|&i| rewards[i] == rewards[idx[0]]);
        if all_equal {
            stats.dropped_groups += 1;
            stats.dropped_samples += idx.len();
            continue;
        }
        let std = var.sqrt();
        for &i in idx {
            let a = match norm {
                Norm::Center => rewards[i] - mean,
                Norm::Std => (rewards[i] - mean) / (std + STD_EPS),
                Norm::None => unreachable!(),
            };
            out[i] = Some(a * scale);
        }
    }
    (out, stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(k: &[&str]) -> Vec<String> {
        k.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn agent_groups_are_standardised_with_population_std() {
        // Group a: [1, 0, 0, 1] → mean 0.5, population std 0.5 → ±1.
        // Group b: [1, 0, 0] → mean 1/3, std sqrt(2/9).
        let r = [1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0];
        let k = keys(&["a", "a", "a", "a", "b", "b", "b"]);
        let (adv, st) = group_advantages(&r, &k, Norm::Std, 1.0);
        let a: Vec<f64> = adv.iter().map(|x| x.unwrap()).collect();
        for (got, want) in a[..4].iter().zip([1.0, -1.0, -1.0, 1.0]) {
            assert!((got - want).abs() < 1e-7, "{got} vs {want}");
        }
        let s = (2.0f64 / 9.0).sqrt();
        assert!((a[4] - (2.0 / 3.0) / (s + STD_EPS)).abs() < 1e-12);
        assert!((a[5] - (-1.0 / 3.0) / (s + STD_EPS)).abs() < 1e-12);
        assert!((a[4] - std::f64::consts::SQRT_2).abs() < 1e-6);
        assert_eq!(st, GroupStats { groups: 2, dropped_groups: 0, dropped_samples: 0 });
    }

    #[test]
    fn zero_variance_groups_are_dropped_and_counted() {
        let r = [1.0, 1.0, 0.3, 0.0, 1.0, 0.5];
        let k = keys(&["same", "same", "single", "mixed", "mixed", "zero"]);
        let (adv, st) = group_advantages(&r, &k, Norm::Std, 1.0);
        assert_eq!(adv[0], None);
        assert_eq!(adv[1], None);
        assert_eq!(adv[2], None);
        assert!(adv[3].unwrap() < 0.0 && adv[4].unwrap() > 0.0);
        assert_eq!(adv[5], None);
        assert_eq!(st, GroupStats { groups: 4, dropped_groups: 3, dropped_samples: 4 });
    }

    #[test]
    fn designer_groups_are_centred_and_scaled() {
        // Skill x: [0.9, 0.5, 0.1] → mean 0.5 → [0.4, 0, −0.4]; times 2.
        let r = [0.9, 0.5, 0.1, 0.2, 0.6];
        let k = keys(&["x", "x", "x", "y", "y"]);
        let (adv, st) = group_advantages(&r, &k, Norm::Center, 2.0);
        let a: Vec<f64> = adv.iter().map(|x| x.unwrap()).collect();
        let want = [0.8, 0.0, -0.8, -0.4, 0.4];
        for (g, w) in a.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{a:?}");
        }
        assert_eq!(st.dropped_groups, 0);
        let (raw, st) = group_advantages(&[0.3, 0.3], &keys(&["x", "x"]), Norm::None, 1.0);
        assert_eq!(raw, vec![Some(0.3), Some(0.3)]);
        assert_eq!(st.dropped_groups, 0);
    }
}
