//! Designer rewards from episode returns (DESIGN; the paper and its reference code).
//!
//! - win rate of an arm = mean `return` of its episodes; regret = hint win rate − no-hint win rate;
//! - `blend` (default) = `w_r · clip(regret / scale, 0, 1) + w_a · plateau(no-hint win rate)`, with
//!   `w_r = 0.4`, `w_a = 0.6`, `scale = 0.15`, plateau 1 inside [0.4, 0.6] falling linearly to 0 over a
//!   ramp of 0.25 outside;
//! - `solve-rate` = plateau only; `learning-potential` = |no-hint win rate − the skill's slow EMA of
//!   win rate| (EMAs updated once per call with the mean of the skill's plays, γ weighting the new
//!   value: fast 0.98, slow 0.85; the first update sets both);
//! - an arm with no plays counts as mean 0 in the regret (as the reference does);
//! - penalties replace the variant: environment failures in play, a hint leak (hint arm always
//!   wins, no-hint arm never does), invalid candidates (graded by validity: `penalty · (1 − validity)`).

use serde::Serialize;
use spade_schema::RewardKind;

/// Which designer reward to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    Blend,
    SolveRate,
    LearningPotential,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Blend => "blend",
            Variant::SolveRate => "solve-rate",
            Variant::LearningPotential => "learning-potential",
        }
    }
}

impl Variant {
    /// The `reward_kind` of a reward this variant set.
    pub fn kind(self) -> RewardKind {
        match self {
            Variant::Blend => RewardKind::Blend,
            Variant::SolveRate => RewardKind::SolveRate,
            Variant::LearningPotential => RewardKind::LearningPotential,
        }
    }
}

impl std::str::FromStr for Variant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "blend" => Ok(Variant::Blend),
            "solve-rate" => Ok(Variant::SolveRate),
            "learning-potential" => Ok(Variant::LearningPotential),
            _ => Err(format!("unknown variant `{s}` (blend, solve-rate, learning-potential)")),
        }
    }
}

/// Reward parameters; defaults are the paper's.
#[derive(Debug, Clone, Serialize)]
pub struct RewardConfig {
    pub variant: Variant,
    pub regret_weight: f64,
    pub anchor_weight: f64,
    pub regret_scale: f64,
    pub band: (f64, f64),
    pub ramp: f64,
    pub invalid_penalty: f64,
    pub failure_penalty: f64,
    pub leak_penalty: f64,
    /// Plays per arm needed before a hint leak is called.
    pub leak_min_plays: i64,
    pub lp_fast: f64,
    pub lp_slow: f64,
}

impl Default for RewardConfig {
    fn default() -> Self {
        RewardConfig {
            variant: Variant::Blend,
            regret_weight: 0.4,
            anchor_weight: 0.6,
            regret_scale: 0.15,
            band: (0.4, 0.6),
            ramp: 0.25,
            invalid_penalty: -1.0,
            failure_penalty: -0.5,
            leak_penalty: -0.5,
            leak_min_plays: 2,
            lp_fast: 0.98,
            lp_slow: 0.85,
        }
    }
}

/// Accumulated plays of one arm.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ArmPlays {
    pub plays: i64,
    pub sum: f64,
    pub wins: i64,
}

impl ArmPlays {
    /// Mean return, `None` without plays.
    pub fn rate(&self) -> Option<f64> {
        (self.plays > 0).then(|| self.sum / self.plays as f64)
    }

    pub fn add(&mut self, ret: f64, success: bool) {
        self.plays += 1;
        self.sum += ret;
        self.wins += success as i64;
    }

    pub fn merge(&mut self, o: &ArmPlays) {
        self.plays += o.plays;
        self.sum += o.sum;
        self.wins += o.wins;
    }
}

/// Accumulated plays of one environment.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Plays {
    pub hint: ArmPlays,
    pub nohint: ArmPlays,
    /// Episodes that ended through the environment's fault.
    pub failures: i64,
}

impl Plays {
    pub fn merge(&mut self, o: &Plays) {
        self.hint.merge(&o.hint);
        self.nohint.merge(&o.nohint);
        self.failures += o.failures;
    }

    pub fn played(&self) -> bool {
        self.hint.plays + self.nohint.plays + self.failures > 0
    }

    /// Hint arm always wins while the no-hint arm never does.
    pub fn is_leak(&self, min_plays: i64) -> bool {
        self.hint.plays >= min_plays.max(1) && self.nohint.plays >= min_plays.max(1) && self.hint.wins == self.hint.plays && self.nohint.wins == 0
    }
}

/// The score of one environment.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    pub hint_win_rate: Option<f64>,
    pub nohint_win_rate: Option<f64>,
    pub regret: Option<f64>,
    pub reward: f64,
    pub kind: RewardKind,
}

/// 1 inside `[lo, hi]`, falling linearly to 0 over `ramp` outside.
pub fn plateau(wr: f64, (lo, hi): (f64, f64), ramp: f64) -> f64 {
    let out = if wr < lo {
        lo - wr
    } else if wr > hi {
        wr - hi
    } else {
        return 1.0;
    };
    if ramp <= 0.0 {
        return 0.0;
    }
    (1.0 - out / ramp).max(0.0)
}

impl RewardConfig {
    /// The blend of floored, scaled regret and the difficulty anchor.
    pub fn blend(&self, regret: f64, nohint_wr: f64) -> f64 {
        let r = if self.regret_scale > 0.0 { (regret / self.regret_scale).clamp(0.0, 1.0) } else { 0.0 };
        self.regret_weight * r + self.anchor_weight * plateau(nohint_wr, self.band, self.ramp)
    }

    /// Reward of an invalid candidate, graded by how far it got.
    pub fn invalid(&self, validity: Option<f64>) -> f64 {
        self.invalid_penalty * (1.0 - validity.unwrap_or(0.0).clamp(0.0, 1.0))
    }

    /// Scores an environment from its accumulated plays. `lp_slow` is its skill's slow EMA
    /// (learning-potential variant only).
    pub fn score(&self, p: &Plays, lp_slow: Option<f64>) -> Outcome {
        let hint_win_rate = p.hint.rate();
        let nohint_win_rate = p.nohint.rate();
        let regret = (p.hint.plays + p.nohint.plays > 0).then(|| hint_win_rate.unwrap_or(0.0) - nohint_win_rate.unwrap_or(0.0));
        let out = |reward, kind| Outcome { hint_win_rate, nohint_win_rate, regret, reward, kind };
        if p.failures > 0 {
            return out(self.failure_penalty, RewardKind::EnvFailure);
        }
        if !p.played() {
            return out(0.0, RewardKind::Unplayed);
        }
        if p.is_leak(self.leak_min_plays) {
            return out(self.leak_penalty, RewardKind::HintLeak);
        }
        let wr = nohint_win_rate.unwrap_or(0.0);
        let reward = match self.variant {
            Variant::Blend => self.blend(regret.unwrap_or(0.0), wr),
            Variant::SolveRate => plateau(wr, self.band, self.ramp),
            Variant::LearningPotential => (wr - lp_slow.unwrap_or(wr)).abs(),
        };
        out(reward, self.variant.kind())
    }
}

/// Per-skill EMA tracker of win rate for the learning-potential variant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ema {
    pub fast: f64,
    pub slow: f64,
}

impl Ema {
    /// Updates with a new win rate (`None` state: both EMAs start at it).
    pub fn update(state: Option<Ema>, r: f64, cfg: &RewardConfig) -> Ema {
        match state {
            None => Ema { fast: r, slow: r },
            Some(s) => Ema { fast: (1.0 - cfg.lp_fast) * s.fast + cfg.lp_fast * r, slow: (1.0 - cfg.lp_slow) * s.slow + cfg.lp_slow * r },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm(plays: i64, sum: f64, wins: i64) -> ArmPlays {
        ArmPlays { plays, sum, wins }
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    #[test]
    fn plateau_band_edges_and_ramp() {
        let b = (0.4, 0.6);
        close(plateau(0.4, b, 0.25), 1.0);
        close(plateau(0.6, b, 0.25), 1.0);
        close(plateau(0.5, b, 0.25), 1.0);
        close(plateau(0.3, b, 0.25), 0.6); // 1 - 0.1/0.25
        close(plateau(0.7, b, 0.25), 0.6);
        close(plateau(0.15, b, 0.25), 0.0);
        close(plateau(0.85, b, 0.25), 0.0);
        close(plateau(0.0, b, 0.25), 0.0);
        close(plateau(1.0, b, 0.25), 0.0);
        close(plateau(0.2, b, 0.25), 0.2);
    }

    #[test]
    fn blend_worked_numbers() {
        let c = RewardConfig::default();
        // regret 0.075 → 0.5 of the regret term; no-hint 0.5 → full anchor: 0.4·0.5 + 0.6·1
        close(c.blend(0.075, 0.5), 0.8);
        // regret above the scale is clipped to 1: 0.4 + 0.6·plateau(0.3)=0.6·0.6
        close(c.blend(0.5, 0.3), 0.4 + 0.36);
        // negative regret floors at 0
        close(c.blend(-0.3, 0.9), 0.0);
        close(c.blend(-0.3, 0.45), 0.6);
    }

    #[test]
    fn score_from_plays() {
        let c = RewardConfig::default();
        // hint 3/4 = 0.75, no-hint 2/4 = 0.5: regret 0.25 → 1 · 0.4 + 0.6 = 1.0
        let p = Plays { hint: arm(4, 3.0, 3), nohint: arm(4, 2.0, 2), failures: 0 };
        let o = c.score(&p, None);
        assert_eq!((o.hint_win_rate, o.nohint_win_rate), (Some(0.75), Some(0.5)));
        close(o.regret.unwrap(), 0.25);
        close(o.reward, 1.0);
        assert_eq!(o.kind, RewardKind::Blend);
        // partial returns: hint mean 0.35, no-hint mean 0.3 → regret 0.05 → 0.4/3 + 0.6·0.6
        let p = Plays { hint: arm(2, 0.7, 0), nohint: arm(2, 0.6, 0), failures: 0 };
        close(c.score(&p, None).reward, 0.4 / 3.0 + 0.36);
    }

    #[test]
    fn empty_arms_count_as_zero_in_regret() {
        let c = RewardConfig::default();
        let only_nohint = Plays { nohint: arm(4, 2.0, 2), ..Default::default() };
        let o = c.score(&only_nohint, None);
        assert_eq!(o.hint_win_rate, None);
        close(o.regret.unwrap(), -0.5);
        close(o.reward, 0.6); // regret floored, anchor full
        let only_hint = Plays { hint: arm(4, 2.0, 2), ..Default::default() };
        let o = c.score(&only_hint, None);
        close(o.regret.unwrap(), 0.5);
        close(o.reward, 0.4); // regret saturates, no-hint win rate 0 → anchor 0
        let none = c.score(&Plays::default(), None);
        assert_eq!((none.kind, none.reward, none.regret), (RewardKind::Unplayed, 0.0, None));
    }

    #[test]
    fn penalties_replace_the_blend() {
        let c = RewardConfig::default();
        let failing = Plays { hint: arm(4, 4.0, 4), nohint: arm(3, 1.0, 1), failures: 1 };
        let o = c.score(&failing, None);
        assert_eq!((o.kind, o.reward), (RewardKind::EnvFailure, -0.5));
        let leak = Plays { hint: arm(4, 4.0, 4), nohint: arm(4, 0.0, 0), failures: 0 };
        let o = c.score(&leak, None);
        assert_eq!((o.kind, o.reward), (RewardKind::HintLeak, -0.5));
        // one no-hint play is not enough evidence of a leak (leak_min_plays = 2)
        let thin = Plays { hint: arm(4, 4.0, 4), nohint: arm(1, 0.0, 0), failures: 0 };
        assert_eq!(c.score(&thin, None).kind, RewardKind::Blend);
        close(c.invalid(Some(0.25)), -0.75);
        close(c.invalid(None), -1.0);
        close(c.invalid(Some(1.0)), 0.0);
    }

    #[test]
    fn variants() {
        let p = Plays { hint: arm(4, 4.0, 4), nohint: arm(4, 1.2, 1), failures: 0 };
        let sr = RewardConfig { variant: Variant::SolveRate, ..Default::default() };
        close(sr.score(&p, None).reward, 0.6); // plateau(0.3) = 1 − 0.1/0.25
        let lp = RewardConfig { variant: Variant::LearningPotential, ..Default::default() };
        close(lp.score(&p, Some(0.5)).reward, 0.2);
        close(lp.score(&p, None).reward, 0.0);
        let e = Ema::update(None, 0.4, &lp);
        assert_eq!(e, Ema { fast: 0.4, slow: 0.4 });
        let e = Ema::update(Some(e), 0.8, &lp);
        close(e.fast, 0.02 * 0.4 + 0.98 * 0.8);
        close(e.slow, 0.15 * 0.4 + 0.85 * 0.8);
    }

    proptest::proptest! {
        #[test]
        fn blend_is_bounded_and_monotone_in_regret(r1 in -1.0f64..1.0, r2 in -1.0f64..1.0, wr in 0.0f64..1.0) {
            let c = RewardConfig::default();
            let (lo, hi) = if r1 <= r2 { (r1, r2) } else { (r2, r1) };
            let (a, b) = (c.blend(lo, wr), c.blend(hi, wr));
            proptest::prop_assert!((0.0..=1.0).contains(&a) && (0.0..=1.0).contains(&b));
            proptest::prop_assert!(a <= b + 1e-15);
        }

        #[test]
        fn plateau_is_bounded(wr in -1.0f64..2.0, ramp in 0.0f64..1.0) {
            let p = plateau(wr, (0.4, 0.6), ramp);
            proptest::prop_assert!((0.0..=1.0).contains(&p));
        }
    }
}
