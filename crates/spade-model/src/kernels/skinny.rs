//! `x · Wᵀ` in f32 for a few rows of `x` (decode steps of a handful of sequences), on AVX-512,
//! AVX2 or NEON.
//!
//! Why our own: a general GEMM (OpenBLAS, candle's `gemm`) packs panels of the weight for every
//! call and is tuned for many rows; with 1–16 rows a decode step's products are bound by reading
//! the 540 MB of f32 weights, and both ran 8-row steps at a third of that pace here. This kernel
//! reads each weight row once per step, straight from its row-major storage (no copy), and
//! applies it to up to [`ROWS`] activation rows while it is in registers and to the rest while
//! it is in L1.
//!
//! Every output is one row of `W` against one row of `x`, summed the same way whatever the
//! other rows: 16 lanes each accumulate every 16th product in order (fused multiply-add), and
//! the lanes are added by one fixed tree. So a sequence's products do not depend on its
//! batch-mates, and [`matmul_reference`] (scalar) equals the kernel bit for bit. On AVX2 the 16
//! lanes are two 8-lane registers and the tree's first step adds them, so the sums are the same;
//! on NEON four 4-lane registers, added by the tree in scalar code.

use super::Isa;
use rayon::prelude::*;

/// Rows of `x` at most for which [`matmul`] is the product to use: measured against OpenBLAS in
/// the engine's decode steps (model bench, 2 threads), it is faster up to 32 rows; prefill chunks
/// (hundreds of rows) go to the GEMM.
pub(crate) const MAX_ROWS: usize = 32;
/// Lanes of one vector.
const LANES: usize = 16;
/// Activation rows applied to a pair of weight rows at a time (2 × 8 accumulators in registers).
#[cfg(target_arch = "x86_64")]
const ROWS: usize = 8;
/// The same on AVX2 (2 × 2 registers per row).
#[cfg(target_arch = "x86_64")]
const ROWS_AVX2: usize = 3;
/// The same on NEON (2 × 4 registers per row).
#[cfg(target_arch = "aarch64")]
const ROWS_NEON: usize = 3;

/// Whether the kernels' level runs this product (a vector level; in scalar code a BLAS is faster).
pub(crate) fn available() -> bool {
    super::isa().vector()
}

/// `y = x · Wᵀ`: `x` is `(m, k)`, `w` is `(n, k)`, both row-major; `y` is `(m, n)`.
pub(crate) fn matmul(w: &[f32], n: usize, k: usize, x: &[f32], m: usize) -> Vec<f32> {
    matmul_on(super::isa(), w, n, k, x, m)
}

/// [`matmul`] at level `isa`.
pub(crate) fn matmul_on(isa: Isa, w: &[f32], n: usize, k: usize, x: &[f32], m: usize) -> Vec<f32> {
    assert!(w.len() == n * k && x.len() == m * k, "skinny::matmul: w must hold n·k and x m·k values");
    if m == 0 || n == 0 {
        return Vec::new();
    }
    // Output-major while computing (each task writes its own outputs' `m` values), transposed at the end.
    let mut t = vec![0f32; n * m];
    // Pairs of weight rows per task: ~64 KiB of weights, enough to outweigh the pool's hand-off.
    let per_task = (16384 / (2 * k).max(1)).max(1);
    t.par_chunks_mut(2 * m).with_min_len(per_task).enumerate().for_each(|(p, out)| {
        let o = 2 * p;
        let pair = &w[o * k..(o + out.len() / m) * k];
        #[cfg(target_arch = "x86_64")]
        if isa >= Isa::Avx2 {
            let rows = if isa == Isa::Avx512 { ROWS } else { ROWS_AVX2 };
            let mut r0 = 0;
            while r0 < m {
                let r = (m - r0).min(rows);
                // SAFETY: the level is only what the CPU has (`Isa::supported`).
                unsafe {
                    match (isa, r) {
                        (Isa::Avx512, _) => super::by_rows!(r, pair_avx512(pair, k, x, r0, m, out)),
                        (_, 1) => pair_avx2::<1>(pair, k, x, r0, m, out),
                        (_, 2) => pair_avx2::<2>(pair, k, x, r0, m, out),
                        _ => pair_avx2::<3>(pair, k, x, r0, m, out),
                    }
                }
                r0 += r;
            }
            return;
        }
        #[cfg(target_arch = "aarch64")]
        if isa.vector() {
            let mut r0 = 0;
            while r0 < m {
                let r = (m - r0).min(ROWS_NEON);
                match r {
                    1 => pair_neon::<1>(pair, k, x, r0, m, out),
                    2 => pair_neon::<2>(pair, k, x, r0, m, out),
                    _ => pair_neon::<3>(pair, k, x, r0, m, out),
                }
                r0 += r;
            }
            return;
        }
        let _ = isa;
        pair_scalar(pair, k, x, m, out);
    });
    let mut y = vec![0f32; m * n];
    for (o, col) in t.chunks(m).enumerate() {
        for (r, &v) in col.iter().enumerate() {
            y[r * n + o] = v;
        }
    }
    y
}

/// The lanes of `v` added by the kernel's fixed tree: halves, then quarters, … (lane i with i+8,
/// then i with i+4, i+2, i+1).
fn lane_sum(v: &[f32; LANES]) -> f32 {
    let mut s = *v;
    let mut w = LANES / 2;
    while w > 0 {
        for i in 0..w {
            s[i] += s[i + w];
        }
        w /= 2;
    }
    s[0]
}

/// One weight row against one activation row, as the kernel sums it.
fn dot_reference(w: &[f32], x: &[f32]) -> f32 {
    let mut acc = [0f32; LANES];
    for (j, (&a, &b)) in w.iter().zip(x).enumerate() {
        acc[j % LANES] = b.mul_add(a, acc[j % LANES]);
    }
    lane_sum(&acc)
}

/// The (one or two) weight rows of `pair` against every row of `x`: `out` is `[weight row][m]`.
fn pair_scalar(pair: &[f32], k: usize, x: &[f32], m: usize, out: &mut [f32]) {
    for (wr, o) in pair.chunks(k).zip(out.chunks_mut(m)) {
        for (r, v) in o.iter_mut().enumerate() {
            *v = dot_reference(wr, &x[r * k..(r + 1) * k]);
        }
    }
}

/// [`pair_scalar`] for rows `r0..r0 + R` of `x`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn pair_avx512<const R: usize>(pair: &[f32], k: usize, x: &[f32], r0: usize, m: usize, out: &mut [f32]) {
    use std::arch::x86_64::*;
    let two = pair.len() / k;
    // The second weight row is the first again when the pair is a lone last row (its sums are dropped).
    let (w0, w1) = (&pair[..k], &pair[(two - 1) * k..two * k]);
    let rows: [&[f32]; R] = std::array::from_fn(|i| &x[(r0 + i) * k..(r0 + i + 1) * k]);
    let mut a0 = [_mm512_setzero_ps(); R];
    let mut a1 = [_mm512_setzero_ps(); R];
    let mut j = 0;
    while j < k {
        if r0 == 0 {
            fetch_next_pair(w0, w1, k, j);
        }
        let mask: __mmask16 = if k - j >= LANES { 0xffff } else { (1u32 << (k - j)) as u16 - 1 };
        // SAFETY: `mask` keeps the loads inside the rows (k − j values left).
        let (v0, v1) = unsafe { (_mm512_maskz_loadu_ps(mask, w0.as_ptr().add(j)), _mm512_maskz_loadu_ps(mask, w1.as_ptr().add(j))) };
        for i in 0..R {
            // SAFETY: as above.
            let xv = unsafe { _mm512_maskz_loadu_ps(mask, rows[i].as_ptr().add(j)) };
            a0[i] = _mm512_fmadd_ps(xv, v0, a0[i]);
            a1[i] = _mm512_fmadd_ps(xv, v1, a1[i]);
        }
        j += LANES;
    }
    for i in 0..R {
        out[r0 + i] = lanes_avx512(a0[i]);
        if two == 2 {
            out[m + r0 + i] = lanes_avx512(a1[i]);
        }
    }
}

/// [`lane_sum`] of a vector, by the same tree.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn lanes_avx512(v: std::arch::x86_64::__m512) -> f32 {
    use std::arch::x86_64::*;
    // Lanes 8..16 onto 0..8, then 4..8 onto 0..4, 2..4 onto 0..2, 1 onto 0.
    let hi = _mm256_castpd_ps(_mm512_extractf64x4_pd::<1>(_mm512_castps_pd(v)));
    let s8 = _mm256_add_ps(_mm512_castps512_ps256(v), hi);
    let s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps::<1>(s8));
    let s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    let s1 = _mm_add_ss(s2, _mm_shuffle_ps::<0b01>(s2, s2));
    _mm_cvtss_f32(s1)
}

/// [`pair_avx512`] on AVX2 (and FMA): lanes 0..8 and 8..16 of the 16 in two registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn pair_avx2<const R: usize>(pair: &[f32], k: usize, x: &[f32], r0: usize, m: usize, out: &mut [f32]) {
    use std::arch::x86_64::*;
    let two = pair.len() / k;
    let (w0, w1) = (&pair[..k], &pair[(two - 1) * k..two * k]);
    let rows: [&[f32]; R] = std::array::from_fn(|i| &x[(r0 + i) * k..(r0 + i + 1) * k]);
    // [row][weight row][half]
    let mut acc = [[[_mm256_setzero_ps(); 2]; 2]; R];
    // Whole groups of 16 by plain loads; a last partial group by [`load`] (its copy is a call,
    // and a call inside the main loop kept every accumulator on the stack: twice the time).
    let whole = k - k % LANES;
    let mut j = 0;
    while j < whole {
        if r0 == 0 {
            fetch_next_pair(w0, w1, k, j);
        }
        for h in 0..2 {
            // SAFETY: 8 values inside each row (j + 16 ≤ whole ≤ k).
            let (v0, v1) = unsafe { (_mm256_loadu_ps(w0.as_ptr().add(j + 8 * h)), _mm256_loadu_ps(w1.as_ptr().add(j + 8 * h))) };
            for (row, a) in rows.iter().zip(acc.iter_mut()) {
                // SAFETY: as above.
                let xv = unsafe { _mm256_loadu_ps(row.as_ptr().add(j + 8 * h)) };
                a[0][h] = _mm256_fmadd_ps(xv, v0, a[0][h]);
                a[1][h] = _mm256_fmadd_ps(xv, v1, a[1][h]);
            }
        }
        j += LANES;
    }
    if j < k {
        for h in 0..2 {
            let (v0, v1) = (load(w0, j + 8 * h), load(w1, j + 8 * h));
            for (row, a) in rows.iter().zip(acc.iter_mut()) {
                let xv = load(row, j + 8 * h);
                a[0][h] = _mm256_fmadd_ps(xv, v0, a[0][h]);
                a[1][h] = _mm256_fmadd_ps(xv, v1, a[1][h]);
            }
        }
    }
    for i in 0..R {
        out[r0 + i] = lanes_avx2(acc[i][0]);
        if two == 2 {
            out[m + r0 + i] = lanes_avx2(acc[i][1]);
        }
    }
}

/// Ask for the line at `j` of the next pair's two weight rows (they follow this pair in memory)
/// while this pair is read by the first row group: the hardware's prefetch alone left the
/// product waiting on memory. A hint only: it never faults, whatever the address.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn fetch_next_pair(w0: &[f32], w1: &[f32], k: usize, j: usize) {
    use std::arch::x86_64::*;
    // SAFETY: a prefetch reads nothing the program sees and never faults.
    unsafe {
        _mm_prefetch::<_MM_HINT_T0>(w0.as_ptr().wrapping_add(2 * k + j) as *const i8);
        _mm_prefetch::<_MM_HINT_T0>(w1.as_ptr().wrapping_add(2 * k + j) as *const i8);
    }
}

/// The 8 values of `v` from `j` (zeros past its end).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
fn load(v: &[f32], j: usize) -> std::arch::x86_64::__m256 {
    use std::arch::x86_64::*;
    if j + 8 <= v.len() {
        // SAFETY: 8 values inside the row.
        unsafe { _mm256_loadu_ps(v.as_ptr().add(j)) }
    } else {
        let mut t = [0f32; 8];
        if j < v.len() {
            t[..v.len() - j].copy_from_slice(&v[j..]);
        }
        // SAFETY: a local array of 8.
        unsafe { _mm256_loadu_ps(t.as_ptr()) }
    }
}

/// [`lane_sum`] of lanes 0..8 and 8..16, by the same tree.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn lanes_avx2([lo, hi]: [std::arch::x86_64::__m256; 2]) -> f32 {
    use std::arch::x86_64::*;
    let s8 = _mm256_add_ps(lo, hi);
    let s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps::<1>(s8));
    let s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    let s1 = _mm_add_ss(s2, _mm_shuffle_ps::<0b01>(s2, s2));
    _mm_cvtss_f32(s1)
}

/// [`pair_scalar`] for rows `r0..r0 + R` on NEON: the 16 lanes in four 4-lane registers, added by [`lane_sum`].
#[cfg(target_arch = "aarch64")]
fn pair_neon<const R: usize>(pair: &[f32], k: usize, x: &[f32], r0: usize, m: usize, out: &mut [f32]) {
    use std::arch::aarch64::*;
    let two = pair.len() / k;
    let (w0, w1) = (&pair[..k], &pair[(two - 1) * k..two * k]);
    let rows: [&[f32]; R] = std::array::from_fn(|i| &x[(r0 + i) * k..(r0 + i + 1) * k]);
    /// The 4 values of `v` from `j` (zeros past its end).
    fn load(v: &[f32], j: usize) -> float32x4_t {
        if j + 4 <= v.len() {
            // SAFETY: 4 values inside the row (NEON is part of every aarch64 target).
            return unsafe { vld1q_f32(v.as_ptr().add(j)) };
        }
        let mut t = [0f32; 4];
        if j < v.len() {
            t[..v.len() - j].copy_from_slice(&v[j..]);
        }
        // SAFETY: a local array of 4.
        unsafe { vld1q_f32(t.as_ptr()) }
    }
    // SAFETY: NEON is part of every aarch64 target; every load is of a local array, checked, or
    // inside the rows (j + 16 ≤ whole ≤ k).
    unsafe {
        // [row][weight row][quarter]
        let mut acc = [[[vdupq_n_f32(0.0); 4]; 2]; R];
        // Whole groups of 16 by plain loads, a last partial group by `load` (a call inside the
        // main loop keeps the accumulators on the stack, as measured on AVX2; not timed on ARM).
        let whole = k - k % LANES;
        let mut j = 0;
        while j < whole {
            for q in 0..4 {
                let (v0, v1) = (vld1q_f32(w0.as_ptr().add(j + 4 * q)), vld1q_f32(w1.as_ptr().add(j + 4 * q)));
                for (row, a) in rows.iter().zip(acc.iter_mut()) {
                    let xv = vld1q_f32(row.as_ptr().add(j + 4 * q));
                    a[0][q] = vfmaq_f32(a[0][q], xv, v0);
                    a[1][q] = vfmaq_f32(a[1][q], xv, v1);
                }
            }
            j += LANES;
        }
        if j < k {
            for q in 0..4 {
                let (v0, v1) = (load(w0, j + 4 * q), load(w1, j + 4 * q));
                for (row, a) in rows.iter().zip(acc.iter_mut()) {
                    let xv = load(row, j + 4 * q);
                    a[0][q] = vfmaq_f32(a[0][q], xv, v0);
                    a[1][q] = vfmaq_f32(a[1][q], xv, v1);
                }
            }
        }
        for (i, a) in acc.iter().enumerate() {
            let lanes = |v: &[float32x4_t; 4]| {
                let mut t = [0f32; LANES];
                for (q, v) in v.iter().enumerate() {
                    vst1q_f32(t[4 * q..].as_mut_ptr(), *v);
                }
                lane_sum(&t)
            };
            out[r0 + i] = lanes(&a[0]);
            if two == 2 {
                out[m + r0 + i] = lanes(&a[1]);
            }
        }
    }
}

/// [`matmul`] in scalar code, for the tests.
#[cfg(test)]
fn matmul_reference(w: &[f32], n: usize, k: usize, x: &[f32], m: usize) -> Vec<f32> {
    let mut y = vec![0f32; m * n];
    for r in 0..m {
        for o in 0..n {
            y[r * n + o] = dot_reference(&w[o * k..(o + 1) * k], &x[r * k..(r + 1) * k]);
        }
    }
    y
}

#[cfg(test)]
mod tests {
    use super::super::random;
    use super::*;

    #[test]
    fn every_level_equals_the_scalar_reference_bit_for_bit_and_each_row_is_its_own() {
        // Odd output counts (a lone last row), inner sizes not a multiple of 16, every row-group size.
        for &(m, n, k) in &[(1, 7, 16), (2, 33, 40), (5, 64, 576), (8, 3, 9), (9, 130, 96), (16, 49, 200)] {
            let w = random(n * k, 1);
            let x = random(m * k, 2);
            let reference = matmul_reference(&w, n, k, &x, m);
            for isa in Isa::runnable() {
                let y = matmul_on(isa, &w, n, k, &x, m);
                assert_eq!(y, reference, "{isa:?} m={m} n={n} k={k}");
                // A row alone gives what it gave among the others.
                for r in 0..m {
                    assert_eq!(matmul_on(isa, &w, n, k, &x[r * k..(r + 1) * k], 1), y[r * n..(r + 1) * n], "{isa:?} m={m} row {r}");
                }
            }
            let y = reference;
            // And the product itself, to f32 rounding.
            for r in 0..m {
                for o in 0..n {
                    let exact: f64 = (0..k).map(|j| x[r * k + j] as f64 * w[o * k + j] as f64).sum();
                    assert!((y[r * n + o] as f64 - exact).abs() < 1e-5 * (k as f64).sqrt(), "({r},{o}): {} vs {exact}", y[r * n + o]);
                }
            }
        }
    }
}
