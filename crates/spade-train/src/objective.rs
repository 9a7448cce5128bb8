//! The per-token GRPO objective and its derivative with respect to the token's log-prob.
//!
//! For a token with current log-prob `lp`, log-prob under the weights at the start of the step
//! `old`, behaviour log-prob `beh` (what the sampler recorded), advantage `A` and optional
//! reference log-prob `ref`:
//!
//! - ratio `ρ = exp(lp − old)`; `pg = max(−A·ρ, −A·clip(ρ, 1 − ε_low, 1 + ε_high))`;
//!   with a dual clip `c > 1` and `A < 0`: `pg = min(pg, −A·c)`;
//! - truncated importance weight `w = min(exp(old − beh), C)`, a constant (detached): `pg · w`;
//! - KL to the reference, k3 estimator: `k3 = exp(ref − lp) − (ref − lp) − 1`, times `β`.
//!
//! The trainer weights each token's loss by its aggregation weight (see [`crate::LossAgg`]) and
//! back-propagates `Σ weight · dL/dlp · lp` (the derivative is exact: `dρ/dlp = ρ`,
//! `dk3/dlp = 1 − exp(ref − lp)`), which keeps the autograd graph to the model's forward.

use serde::{Deserialize, Serialize};

/// Objective hyper-parameters (defaults: the reference's).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Objective {
    pub eps_low: f64,
    pub eps_high: f64,
    /// Dual-clip constant `c` (> 1), off when `None` (the reference).
    pub dual_clip: Option<f64>,
    /// TIS cap `C`.
    pub tis_cap: f64,
    /// KL coefficient β (0: no KL term, no reference forward).
    pub kl_coef: f64,
}

impl Default for Objective {
    fn default() -> Self {
        Objective { eps_low: 0.2, eps_high: 0.28, dual_clip: None, tis_cap: 2.0, kl_coef: 0.0 }
    }
}

/// One token's terms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TokenTerms {
    /// Loss of the token (pg·w + β·k3), before the aggregation weight.
    pub loss: f64,
    /// The policy-gradient part alone (pg·w).
    pub pg: f64,
    /// dloss/dlp.
    pub grad: f64,
    /// Whether the ratio clip bound (either side, or the dual clip).
    pub clipped: bool,
    /// The truncated importance weight.
    pub tis: f64,
    /// Whether `exp(old − beh)` exceeded the cap.
    pub tis_capped: bool,
    /// k3 (0 without a reference).
    pub kl: f64,
}

impl TokenTerms {
    /// The supervised (negative log-likelihood) terms of a token with log-prob `lp`.
    pub fn nll(lp: f64) -> TokenTerms {
        TokenTerms { loss: -lp, pg: -lp, grad: -1.0, clipped: false, tis: 1.0, tis_capped: false, kl: 0.0 }
    }
}

impl Objective {
    /// The terms of one token.
    pub fn token(&self, lp: f64, old: f64, beh: f64, adv: f64, reference: Option<f64>) -> TokenTerms {
        let ratio = (lp - old).exp();
        let clipped_ratio = ratio.clamp(1.0 - self.eps_low, 1.0 + self.eps_high);
        let pg1 = -adv * ratio;
        let pg2 = -adv * clipped_ratio;
        let (mut pg, mut grad, mut clipped) = if pg2 > pg1 { (pg2, 0.0, true) } else { (pg1, -adv * ratio, false) };
        if let Some(c) = self.dual_clip {
            if adv < 0.0 && pg > -adv * c {
                pg = -adv * c;
                grad = 0.0;
                clipped = true;
            }
        }
        let raw_w = (old - beh).exp();
        let tis = raw_w.min(self.tis_cap);
        pg *= tis;
        grad *= tis;
        let mut loss = pg;
        let mut kl = 0.0;
        if let Some(r) = reference {
            let x = r - lp;
            kl = x.exp() - x - 1.0;
            loss += self.kl_coef * kl;
            grad += self.kl_coef * (1.0 - x.exp());
        }
        TokenTerms { loss, pg, grad, clipped, tis, tis_capped: raw_w > self.tis_cap, kl }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fd(o: &Objective, lp: f64, old: f64, beh: f64, adv: f64, r: Option<f64>) -> f64 {
        let h = 1e-6;
        (o.token(lp + h, old, beh, adv, r).loss - o.token(lp - h, old, beh, adv, r).loss) / (2.0 * h)
    }

    #[test]
    fn unclipped_gradient_is_minus_advantage_times_ratio() {
        let o = Objective::default();
        let t = o.token(-1.0, -1.0, -1.0, 0.7, None);
        assert_eq!((t.loss, t.grad, t.clipped, t.tis), (-0.7, -0.7, false, 1.0));
        let t = o.token(-1.1, -1.0, -1.0, -0.5, None);
        assert!((t.grad - 0.5 * (-0.1f64).exp()).abs() < 1e-12);
        assert!((t.grad - fd(&o, -1.1, -1.0, -1.0, -0.5, None)).abs() < 1e-6);
    }

    #[test]
    fn clipping_on_both_sides() {
        let o = Objective::default();
        // Positive advantage, ratio above 1 + ε_high: clipped, no gradient, loss at the bound.
        let t = o.token((1.4f64).ln(), 0.0, 0.0, 1.0, None);
        assert!(t.clipped && t.grad == 0.0 && (t.loss + 1.28).abs() < 1e-12);
        // Positive advantage, ratio below 1 − ε_low: not clipped (pessimistic max keeps ρ).
        let t = o.token((0.5f64).ln(), 0.0, 0.0, 1.0, None);
        assert!(!t.clipped && (t.grad + 0.5).abs() < 1e-12);
        // Negative advantage, ratio below 1 − ε_low: clipped at 0.8.
        let t = o.token((0.5f64).ln(), 0.0, 0.0, -1.0, None);
        assert!(t.clipped && t.grad == 0.0 && (t.loss - 0.8).abs() < 1e-12);
        // Negative advantage, ratio above 1 + ε_high: not clipped.
        let t = o.token((1.4f64).ln(), 0.0, 0.0, -1.0, None);
        assert!(!t.clipped && (t.grad - 1.4).abs() < 1e-12);
        // Just inside the bounds: no clip either side.
        for r in [0.81, 1.27] {
            for a in [1.0, -1.0] {
                assert!(!o.token(f64::ln(r), 0.0, 0.0, a, None).clipped);
            }
        }
    }

    #[test]
    fn dual_clip_bounds_negative_advantages() {
        let o = Objective { dual_clip: Some(3.0), ..Default::default() };
        let t = o.token((5.0f64).ln(), 0.0, 0.0, -1.0, None);
        assert!(t.clipped && t.grad == 0.0 && (t.loss - 3.0).abs() < 1e-12);
        let t = o.token((2.0f64).ln(), 0.0, 0.0, -1.0, None);
        assert!(!t.clipped && (t.grad - 2.0).abs() < 1e-12);
    }

    #[test]
    fn tis_weight_is_capped_and_scales_the_gradient() {
        let o = Objective::default();
        // Behaviour much less likely than the current weights: exp(2) > 2 → w = 2.
        let t = o.token(-1.0, -1.0, -3.0, 1.0, None);
        assert!(t.tis_capped && t.tis == 2.0 && t.grad == -2.0);
        // Behaviour more likely: w = exp(−0.5), uncapped.
        let t = o.token(-1.0, -1.0, -0.5, 1.0, None);
        assert!(!t.tis_capped && (t.tis - (-0.5f64).exp()).abs() < 1e-15);
        assert!((t.grad + (-0.5f64).exp()).abs() < 1e-15);
        let o = Objective { tis_cap: 1.5, ..Default::default() };
        assert_eq!(o.token(-1.0, -1.0, -3.0, 1.0, None).tis, 1.5);
    }

    #[test]
    fn kl_is_zero_at_the_reference_and_its_gradient_is_exact() {
        let o = Objective { kl_coef: 0.1, ..Default::default() };
        let t = o.token(-2.0, -2.0, -2.0, 0.0, Some(-2.0));
        assert_eq!((t.kl, t.grad, t.loss), (0.0, 0.0, 0.0));
        let t = o.token(-2.0, -2.0, -2.0, 0.3, Some(-1.5));
        assert!(t.kl > 0.0);
        assert!((t.grad - fd(&o, -2.0, -2.0, -2.0, 0.3, Some(-1.5))).abs() < 1e-6);
    }
}
