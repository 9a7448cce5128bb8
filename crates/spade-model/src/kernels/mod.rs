//! The engine's own CPU kernels (the Q8_0 product [`q8`] and the Q4_1 one [`q4`] on its tiles, the
//! few-row f32 product [`skinny`],
//! the decode attention [`attend`]), and the one place that picks the instruction set they run on.
//!
//! Levels, best first: on x86-64 `avx512` (AVX-512 F, BW and VNNI), `avxvnni` (AVX2, FMA and F16C
//! with AVX-VNNI's 256-bit integer dot products: Intel client CPUs from Alder Lake, AMD Zen 5; the
//! integer products use them, the rest runs the AVX2 forms), `avx2` (AVX2, FMA and F16C: AMD Zen 2–4,
//! older Intel client CPUs); on ARM (aarch64) `dotprod` (NEON with the dot-product
//! instructions: Graviton 2+, Apple M, Cortex-A76+), `neon` (any aarch64); `scalar` anywhere.
//! Each kernel's vector forms are held bit for bit to its scalar reference by the tests, so forcing
//! a level down changes the speed and never the numbers; at `scalar` the Q8_0 product and the
//! attention run their references, and the f32 decode product runs on BLAS/candle instead of the
//! slow reference (the same tokens, log-probs off by rounding). The level is the best this CPU has, or the one
//! `SPADE_ISA` names (`auto` or a level's name): forcing it down is how the benches
//! measure the paths a user's CPU takes, and how the tests run the scalar path on any machine.

pub(crate) mod attend;
pub(crate) mod q4;
pub(crate) mod q8;
pub(crate) mod skinny;

use std::sync::OnceLock;

/// `$f::<R>(args…)` with `R` the run-time row count `$r` of a group (1 to 8; more is taken as 8,
/// which the callers' grouping never gives): the kernels keep a group's rows in registers, so
/// the count is a constant of each instance.
#[cfg(target_arch = "x86_64")]
macro_rules! by_rows {
    ($r:expr, $f:ident($($a:expr),* $(,)?)) => {
        match $r {
            1 => $f::<1>($($a),*),
            2 => $f::<2>($($a),*),
            3 => $f::<3>($($a),*),
            4 => $f::<4>($($a),*),
            5 => $f::<5>($($a),*),
            6 => $f::<6>($($a),*),
            7 => $f::<7>($($a),*),
            _ => $f::<8>($($a),*),
        }
    };
}
#[cfg(target_arch = "x86_64")]
pub(crate) use by_rows;

/// The environment variable that forces the level.
pub const ISA_ENV: &str = "SPADE_ISA";

/// An instruction-set level of the kernels. The order is worse to better within one
/// architecture (x86-64's levels and ARM's are never both supported).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Isa {
    Scalar,
    Neon,
    Dotprod,
    Avx2,
    AvxVnni,
    Avx512,
}

impl Isa {
    /// Every level, worst first.
    pub const ALL: [Isa; 6] = [Isa::Scalar, Isa::Neon, Isa::Dotprod, Isa::Avx2, Isa::AvxVnni, Isa::Avx512];

    /// The name `SPADE_ISA` takes.
    pub fn name(self) -> &'static str {
        match self {
            Isa::Scalar => "scalar",
            Isa::Neon => "neon",
            Isa::Dotprod => "dotprod",
            Isa::Avx2 => "avx2",
            Isa::AvxVnni => "avxvnni",
            Isa::Avx512 => "avx512",
        }
    }

    /// Whether this CPU runs this level's kernels.
    pub fn supported(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use std::is_x86_feature_detected as has;
            match self {
                Isa::Scalar => true,
                Isa::Neon | Isa::Dotprod => false,
                Isa::Avx2 => has!("avx2") && has!("fma") && has!("f16c"),
                Isa::AvxVnni => Isa::Avx2.supported() && has!("avxvnni"),
                Isa::Avx512 => Isa::Avx2.supported() && has!("avx512f") && has!("avx512bw") && has!("avx512vnni"),
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            // NEON is part of every aarch64 target.
            match self {
                Isa::Scalar | Isa::Neon => true,
                Isa::Dotprod => std::arch::is_aarch64_feature_detected!("dotprod"),
                Isa::Avx2 | Isa::AvxVnni | Isa::Avx512 => false,
            }
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            self == Isa::Scalar
        }
    }

    /// Whether this is a vector level (the kernels' own fast forms run).
    pub fn vector(self) -> bool {
        self != Isa::Scalar
    }

    /// Whether the Q8_0 product runs on integer dot-product instructions at this level (what
    /// makes `q8_0` the faster representation: `--repr auto`).
    pub fn integer_dot(self) -> bool {
        matches!(self, Isa::Avx2 | Isa::AvxVnni | Isa::Avx512 | Isa::Dotprod)
    }

    /// The best level this CPU runs.
    pub fn detected() -> Isa {
        Isa::ALL.into_iter().rev().find(|i| i.supported()).unwrap_or(Isa::Scalar)
    }

    /// The levels this CPU runs (what the tests compare), worst first.
    pub fn runnable() -> Vec<Isa> {
        Isa::ALL.into_iter().filter(|i| i.supported()).collect()
    }
}

/// The level `SPADE_ISA` asks for (the detected one when it is unset, empty or `auto`); an error
/// names the variable and the value when it is unknown or beyond this CPU.
pub fn configured() -> Result<Isa, String> {
    let value = std::env::var(ISA_ENV).unwrap_or_default();
    let value = value.trim();
    if value.is_empty() || value == "auto" {
        return Ok(Isa::detected());
    }
    let Some(isa) = Isa::ALL.into_iter().find(|i| i.name() == value) else {
        let names: Vec<&str> = Isa::ALL.iter().rev().map(|i| i.name()).collect();
        return Err(format!("{ISA_ENV}={value}: unknown; use auto, {}", names.join(", ")));
    };
    if !isa.supported() {
        return Err(format!("{ISA_ENV}={value}: this CPU does not have it (it has {})", Isa::detected().name()));
    }
    Ok(isa)
}

/// The level the kernels run at in this process: [`configured`], read once (the detected level
/// when the variable is wrong; the stages check it first and stop on an error).
pub fn isa() -> Isa {
    static LEVEL: OnceLock<Isa> = OnceLock::new();
    *LEVEL.get_or_init(|| configured().unwrap_or_else(|_| Isa::detected()))
}

/// `n` values uniform in [-1, 1) from `seed` (the kernels' tests).
#[cfg(test)]
pub(crate) fn random(n: usize, seed: u64) -> Vec<f32> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

/// The integer products' shared check: for rows not a multiple of the tile, every row-group size,
/// a first block of the constant `first` and a second of extreme values (±1 weights against ±1
/// activations: the largest integer sums the vector forms make), every runnable level's product
/// equals the scalar level's bit for bit, alone and beside other weights in one pass, and is close
/// to the f32 product with the weight as the packing holds it. `pack` returns the packed weight and
/// those values.
#[cfg(test)]
pub(crate) fn check_packed_product(pack: impl Fn(&[f32], usize, usize) -> (Box<dyn q8::Packed>, Vec<f32>), first: f32) {
    use q8::{matmul_many_on, quantise_rows, BLOCK};
    // Every group size 1 to 8 at every level (a product of up to 8 rows is one group).
    for &(m, n, k) in
        &[(1, 40, 64), (2, 16, 32), (3, 16, 32), (4, 24, 64), (5, 16, 32), (6, 33, 96), (7, 16, 64), (8, 40, 96), (9, 200, 576), (21, 48, 128)]
    {
        let mut w = random(n * k, 1);
        w[..BLOCK].fill(first);
        w[BLOCK..2 * BLOCK].iter_mut().enumerate().for_each(|(j, v)| *v = if j % 3 == 0 { -1.0 } else { 1.0 });
        let mut x = random(m * k, 2);
        x[BLOCK..2 * BLOCK].iter_mut().enumerate().for_each(|(j, v)| *v = if j % 2 == 0 { -1.0 } else { 1.0 });
        let (p, held) = pack(&w, n, k);
        let a = quantise_rows(&x, m, k);
        let reference = matmul_many_on(Isa::Scalar, &[&*p], &a).pop().unwrap();
        let (p2, _) = pack(&random(7 * k, 4), 7, k);
        for isa in Isa::runnable() {
            let y = matmul_many_on(isa, &[&*p], &a).pop().unwrap();
            assert_eq!(y, reference, "{isa:?} m={m} n={n} k={k}");
            // Several weights in one pass: each product as alone.
            let both = matmul_many_on(isa, &[&*p2, &*p, &*p2], &a);
            let alone = matmul_many_on(isa, &[&*p2], &a).pop().unwrap();
            assert_eq!((&both[0], &both[1], &both[2]), (&alone, &y, &alone), "{isa:?}");
        }
        // Close to the f32 product (the activations' 8-bit rounding, and for a weight held as f32
        // its own, are all that differ).
        for r in 0..m {
            for c in 0..n {
                let exact: f32 = (0..k).map(|j| x[r * k + j] * held[c * k + j]).sum();
                let y = reference[r * n + c];
                assert!((y - exact).abs() < 0.02 * (k as f32).sqrt(), "m={m} n={n} k={k} ({r},{c}): {y} vs {exact}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_ordered_and_scalar_always_runs() {
        assert!(Isa::Scalar.supported());
        let r = Isa::runnable();
        assert_eq!(r[0], Isa::Scalar);
        assert_eq!(*r.last().unwrap(), Isa::detected());
        // `make test-arm` says which level each emulated CPU must be detected as.
        if let Ok(want) = std::env::var("SPADE_TEST_EXPECT_ISA") {
            assert_eq!(Isa::detected().name(), want);
        }
        // The levels whose Q8_0 product has integer dot products (`--repr auto` takes q8_0 there).
        let dot: Vec<Isa> = Isa::ALL.into_iter().filter(|i| i.integer_dot()).collect();
        assert_eq!(dot, [Isa::Dotprod, Isa::Avx2, Isa::AvxVnni, Isa::Avx512]);
        // A CPU with the better level has the lesser ones (of its architecture; AVX-512 VNNI comes
        // without AVX-VNNI on some, as Ice Lake servers).
        for (worse, better) in
            [(Isa::Neon, Isa::Dotprod), (Isa::Avx2, Isa::Avx512), (Isa::Avx2, Isa::AvxVnni), (Isa::Scalar, Isa::Neon), (Isa::Scalar, Isa::Avx2)]
        {
            assert!(!better.supported() || worse.supported());
        }
    }
}
