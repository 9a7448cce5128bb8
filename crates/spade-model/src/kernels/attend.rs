//! Decode attention: one new row per sequence against its cached keys and values, for a group of
//! sequences whose first `shared` positions are equal bit for bit (copied from one another), the
//! `g` query heads of one KV head, head size `16 · L` (64, 128 or 256: [`serves`]).
//!
//! Keys and values are walked in blocks, every member in turn on a block, and the shared
//! positions are read from the first member's cache: they come from memory once and from cache
//! for the others. Each member's numbers are what it would get alone, and what [`rows_reference`]
//! (scalar) gets: a key's score is 16 lanes of fused products (lane `l` sums every 16th product in
//! order, the first a plain product), added by one fixed tree (within each group of four lanes
//! `(x0 + x2) + (x1 + x3)`, then groups `(G0 + G1) + (G2 + G3)`), times the scale; the softmax is
//! [`softmax_in_place`]; each output adds the values by fused multiply-adds in position order.
//! AVX-512 holds the 16 lanes in one register, AVX2 in two (lanes 0..8 and 8..16), NEON in four,
//! and all sum by that tree, so the levels agree bit for bit.
//!
//! The caches hold f32 or f16 values ([`Elem`]); an f16 is widened to the same f32 at every level
//! (AVX-512's and F16C's `vcvtph2ps`, NEON's `fcvtl`, the reference's exact conversion), so the
//! levels agree on f16 caches too, reading half the bytes.

use std::borrow::Cow;

use half::{f16, slice::HalfFloatSliceExt};

use super::Isa;
use crate::blocks::softmax_in_place;

/// A cached key or value: f32, or f16 (read back exactly as f32).
pub(crate) trait Elem: Copy + Send + Sync + 'static {
    /// Whether this is f16.
    const HALF: bool;
    fn get(self) -> f32;
    /// The values as f32: borrowed, or widened into a new buffer.
    fn widen(s: &[Self]) -> Cow<'_, [f32]>;
}

impl Elem for f32 {
    const HALF: bool = false;
    #[inline(always)]
    fn get(self) -> f32 {
        self
    }
    fn widen(s: &[f32]) -> Cow<'_, [f32]> {
        Cow::Borrowed(s)
    }
}

impl Elem for f16 {
    const HALF: bool = true;
    #[inline(always)]
    fn get(self) -> f32 {
        self.to_f32()
    }
    fn widen(s: &[f16]) -> Cow<'_, [f32]> {
        let mut o = vec![0f32; s.len()];
        s.convert_to_f32_slice(&mut o);
        Cow::Owned(o)
    }
}

/// 16 values from `p` as f32 (AVX-512).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn ld16<E: Elem>(p: *const E) -> std::arch::x86_64::__m512 {
    use std::arch::x86_64::*;
    // SAFETY: the caller passes 16 readable values.
    unsafe {
        if E::HALF {
            _mm512_cvtph_ps(_mm256_loadu_si256(p.cast()))
        } else {
            _mm512_loadu_ps(p.cast())
        }
    }
}

/// 8 values from `p` as f32 (AVX2 and F16C).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2,fma,f16c")]
unsafe fn ld8<E: Elem>(p: *const E) -> std::arch::x86_64::__m256 {
    use std::arch::x86_64::*;
    // SAFETY: the caller passes 8 readable values.
    unsafe {
        if E::HALF {
            _mm256_cvtph_ps(_mm_loadu_si128(p.cast()))
        } else {
            _mm256_loadu_ps(p.cast())
        }
    }
}

/// 4 values from `p` as f32 (NEON; f16 widened by `fcvtl`, part of every aarch64 CPU).
#[cfg(target_arch = "aarch64")]
#[inline(always)]
unsafe fn ld4<E: Elem>(p: *const E) -> std::arch::aarch64::float32x4_t {
    use std::arch::aarch64::*;
    // SAFETY: the caller passes 4 readable values.
    unsafe {
        if E::HALF {
            let h = vld1_u16(p.cast());
            let r: float32x4_t;
            std::arch::asm!("fcvtl {0:v}.4s, {1:v}.4h", out(vreg) r, in(vreg) h, options(pure, nomem, nostack, preserves_flags));
            r
        } else {
            vld1q_f32(p.cast())
        }
    }
}

/// Keys a block walks before the next member takes its turn.
const BLOCK: usize = 64;

/// Whether these kernels serve head size `hd`.
pub(crate) fn serves(hd: usize) -> bool {
    matches!(hd, 64 | 128 | 256)
}

/// The rows of `qs.len()` members (see the module docs): member `m` has its row `qs[m]` (all
/// query heads), its KV head's cache `ks[m]`, `vs[m]` (`hd` floats per position) and `keys[m]`
/// positions. Returns each member's `g · hd` outputs, side by side. `hd` must be [`serves`]'s;
/// the scalar level runs [`rows_reference`].
#[allow(clippy::too_many_arguments)]
pub(crate) fn rows<E: Elem>(
    isa: Isa,
    qs: &[&[f32]],
    ks: &[&[E]],
    vs: &[&[E]],
    keys: &[usize],
    shared: usize,
    kvh: usize,
    g: usize,
    hd: usize,
    scale: f32,
) -> Vec<f32> {
    assert!(serves(hd) && keys.iter().all(|&n| n >= shared));
    for m in 0..qs.len() {
        assert!(qs[m].len() >= (kvh + 1) * g * hd && ks[m].len() >= keys[m] * hd && vs[m].len() >= keys[m] * hd);
    }
    let a = Args { qs, ks, vs, keys, shared, kvh, g, hd, scale };
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the level is only what the CPU has (`Isa::supported`); the sizes were checked above.
    unsafe {
        match (isa, hd / 16) {
            (Isa::Avx512, 4) => return rows_avx512::<4, E>(&a),
            (Isa::Avx512, 8) => return rows_avx512::<8, E>(&a),
            (Isa::Avx512, _) => return rows_avx512::<16, E>(&a),
            (Isa::Avx2 | Isa::AvxVnni, 4) => return rows_avx2::<4, E>(&a),
            (Isa::Avx2 | Isa::AvxVnni, 8) => return rows_avx2::<8, E>(&a),
            (Isa::Avx2 | Isa::AvxVnni, _) => return rows_avx2::<16, E>(&a),
            _ => {}
        }
    }
    #[cfg(target_arch = "aarch64")]
    if isa.vector() {
        return rows_neon(&a);
    }
    let _ = isa;
    rows_reference(&a)
}

/// [`rows`]'s arguments.
struct Args<'a, E> {
    qs: &'a [&'a [f32]],
    ks: &'a [&'a [E]],
    vs: &'a [&'a [E]],
    keys: &'a [usize],
    shared: usize,
    kvh: usize,
    g: usize,
    hd: usize,
    scale: f32,
}

impl<E: Elem> Args<'_, E> {
    /// Position `t` of member `m` in cache `b`: the first member's copy while shared.
    fn row(&self, b: &[&[E]], m: usize, t: usize) -> *const E {
        b[if t < self.shared { 0 } else { m }][t * self.hd..].as_ptr()
    }

    /// Each member's scores: `g` rows of `keys[m]` rounded up to 16.
    fn scores(&self) -> (Vec<usize>, Vec<Vec<f32>>) {
        let stride: Vec<usize> = self.keys.iter().map(|&n| n.next_multiple_of(16)).collect();
        let p = stride.iter().map(|&n| vec![0f32; self.g * n]).collect();
        (stride, p)
    }

    fn softmax(&self, stride: &[usize], p: &mut [Vec<f32>]) {
        for m in 0..self.qs.len() {
            for h in 0..self.g {
                softmax_in_place(&mut p[m][h * stride[m]..h * stride[m] + self.keys[m]]);
            }
        }
    }
}

/// The tree of the module docs over 16 lanes.
fn tree16(x: &[f32; 16]) -> f32 {
    let group = |i: usize| (x[4 * i] + x[4 * i + 2]) + (x[4 * i + 1] + x[4 * i + 3]);
    (group(0) + group(1)) + (group(2) + group(3))
}

/// [`rows`] in scalar code, one member at a time: the numbers every level computes.
fn rows_reference<E: Elem>(a: &Args<E>) -> Vec<f32> {
    let (g, hd) = (a.g, a.hd);
    let mut out = vec![0f32; a.qs.len() * g * hd];
    for m in 0..a.qs.len() {
        let n = a.keys[m];
        for h in 0..g {
            let q = &a.qs[m][(a.kvh * g + h) * hd..(a.kvh * g + h + 1) * hd];
            let mut p: Vec<f32> = (0..n)
                .map(|t| {
                    let k = &a.ks[m][t * hd..(t + 1) * hd];
                    let mut lanes = [0f32; 16];
                    for (l, lane) in lanes.iter_mut().enumerate() {
                        *lane = q[l] * k[l].get();
                        for i in (16 + l..hd).step_by(16) {
                            *lane = q[i].mul_add(k[i].get(), *lane);
                        }
                    }
                    tree16(&lanes) * a.scale
                })
                .collect();
            softmax_in_place(&mut p);
            let o = &mut out[(m * g + h) * hd..(m * g + h + 1) * hd];
            for (t, &w) in p.iter().enumerate() {
                for (o, &v) in o.iter_mut().zip(&a.vs[m][t * hd..(t + 1) * hd]) {
                    *o = w.mul_add(v.get(), *o);
                }
            }
        }
    }
    out
}

/// [`rows`] on NEON: a key's 16 lanes in four 4-lane registers, added by [`tree16`]; the values
/// four outputs at a time.
#[cfg(target_arch = "aarch64")]
fn rows_neon<E: Elem>(a: &Args<E>) -> Vec<f32> {
    use std::arch::aarch64::*;
    let (g, hd, members) = (a.g, a.hd, a.qs.len());
    let most = a.keys.iter().copied().max().unwrap_or(0);
    let (stride, mut p) = a.scores();
    // SAFETY (every pointer below): rows lie inside the caches and heads inside the rows (checked
    // by `rows`, `hd` a multiple of 16); NEON is part of every aarch64 target.
    unsafe {
        for t0 in (0..most).step_by(BLOCK) {
            for m in 0..members {
                for t in t0..(t0 + BLOCK).min(a.keys[m]) {
                    let kr = a.row(a.ks, m, t);
                    for h in 0..g {
                        let q = a.qs[m][(a.kvh * g + h) * hd..].as_ptr();
                        let mut acc: [float32x4_t; 4] = std::array::from_fn(|c| vmulq_f32(vld1q_f32(q.add(4 * c)), ld4(kr.add(4 * c))));
                        for i in (16..hd).step_by(16) {
                            for (c, s) in acc.iter_mut().enumerate() {
                                *s = vfmaq_f32(*s, vld1q_f32(q.add(i + 4 * c)), ld4(kr.add(i + 4 * c)));
                            }
                        }
                        let mut lanes = [0f32; 16];
                        for (c, s) in acc.iter().enumerate() {
                            vst1q_f32(lanes[4 * c..].as_mut_ptr(), *s);
                        }
                        p[m][h * stride[m] + t] = tree16(&lanes) * a.scale;
                    }
                }
            }
        }
    }
    a.softmax(&stride, &mut p);
    let mut out = vec![0f32; members * g * hd];
    unsafe {
        for t0 in (0..most).step_by(BLOCK) {
            for m in 0..members {
                let t1 = (t0 + BLOCK).min(a.keys[m]);
                for h in 0..g {
                    let o = out[(m * g + h) * hd..].as_mut_ptr();
                    // 16 outputs at a time (four registers).
                    for c0 in (0..hd).step_by(16) {
                        let o = o.add(c0);
                        let mut acc: [float32x4_t; 4] = std::array::from_fn(|i| vld1q_f32(o.add(4 * i)));
                        for t in t0..t1 {
                            let (wt, vr) = (vdupq_n_f32(p[m][h * stride[m] + t]), a.row(a.vs, m, t).add(c0));
                            for (i, s) in acc.iter_mut().enumerate() {
                                *s = vfmaq_f32(*s, wt, ld4(vr.add(4 * i)));
                            }
                        }
                        for (i, s) in acc.iter().enumerate() {
                            vst1q_f32(o.add(4 * i), *s);
                        }
                    }
                }
            }
        }
    }
    out
}

/// The 16 scores of `v` (lane `j` of the result: the tree of `v[j]`'s lanes).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn hsum16(v: &[std::arch::x86_64::__m512; 16]) -> std::arch::x86_64::__m512 {
    use std::arch::x86_64::*;
    // Within each 128-bit lane: pairs, then quads of vectors.
    let s1: [__m512; 8] =
        std::array::from_fn(|i| _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1])));
    let s2: [__m512; 4] = std::array::from_fn(|i| {
        _mm512_add_ps(_mm512_shuffle_ps::<0x44>(s1[2 * i], s1[2 * i + 1]), _mm512_shuffle_ps::<0xEE>(s1[2 * i], s1[2 * i + 1]))
    });
    // Across the four 128-bit lanes.
    let t: [__m512; 2] = std::array::from_fn(|i| {
        _mm512_add_ps(_mm512_shuffle_f32x4::<0x88>(s2[2 * i], s2[2 * i + 1]), _mm512_shuffle_f32x4::<0xDD>(s2[2 * i], s2[2 * i + 1]))
    });
    _mm512_add_ps(_mm512_shuffle_f32x4::<0x88>(t[0], t[1]), _mm512_shuffle_f32x4::<0xDD>(t[0], t[1]))
}

/// [`rows`] on AVX-512 (`hd = 16 · L`): 16 keys' scores at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn rows_avx512<const L: usize, E: Elem>(a: &Args<E>) -> Vec<f32> {
    use std::arch::x86_64::*;
    let (g, hd, members) = (a.g, a.hd, a.qs.len());
    let most = a.keys.iter().copied().max().unwrap_or(0);
    let (stride, mut p) = a.scores();
    // SAFETY (every pointer below): rows lie inside the caches and heads inside the rows (checked by `rows`).
    unsafe {
        for t0 in (0..most).step_by(BLOCK) {
            for m in 0..members {
                for b0 in (t0..(t0 + BLOCK).min(a.keys[m])).step_by(16) {
                    let n = 16.min(a.keys[m] - b0);
                    for h in 0..g {
                        let q = a.qs[m][(a.kvh * g + h) * hd..].as_ptr();
                        let qv: [__m512; L] = std::array::from_fn(|i| _mm512_loadu_ps(q.add(16 * i)));
                        let mut acc = [_mm512_setzero_ps(); 16];
                        for (j, s) in acc.iter_mut().enumerate().take(n) {
                            let kr = a.row(a.ks, m, b0 + j);
                            *s = _mm512_mul_ps(qv[0], ld16(kr));
                            for (i, qi) in qv.iter().enumerate().skip(1) {
                                *s = _mm512_fmadd_ps(*qi, ld16(kr.add(16 * i)), *s);
                            }
                        }
                        let sc = _mm512_mul_ps(hsum16(&acc), _mm512_set1_ps(a.scale));
                        _mm512_storeu_ps(p[m][h * stride[m] + b0..].as_mut_ptr(), sc);
                    }
                }
            }
        }
    }
    a.softmax(&stride, &mut p);
    let mut out = vec![0f32; members * g * hd];
    unsafe {
        for t0 in (0..most).step_by(BLOCK) {
            for m in 0..members {
                let t1 = (t0 + BLOCK).min(a.keys[m]);
                for h in 0..g {
                    let o = out[(m * g + h) * hd..].as_mut_ptr();
                    let mut acc: [__m512; L] = std::array::from_fn(|i| _mm512_loadu_ps(o.add(16 * i)));
                    for t in t0..t1 {
                        let (wt, vr) = (_mm512_set1_ps(p[m][h * stride[m] + t]), a.row(a.vs, m, t));
                        for (i, s) in acc.iter_mut().enumerate() {
                            *s = _mm512_fmadd_ps(wt, ld16(vr.add(16 * i)), *s);
                        }
                    }
                    for (i, s) in acc.iter().enumerate() {
                        _mm512_storeu_ps(o.add(16 * i), *s);
                    }
                }
            }
        }
    }
    out
}

/// The 8 partial scores of `v` (lane `j`: groups 0 and 1 of `v[j]`'s 8 lanes, `G0 + G1`, by the tree).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn hsum8(v: &[std::arch::x86_64::__m256; 8]) -> std::arch::x86_64::__m256 {
    use std::arch::x86_64::*;
    let s1: [__m256; 4] =
        std::array::from_fn(|i| _mm256_add_ps(_mm256_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm256_unpackhi_ps(v[2 * i], v[2 * i + 1])));
    let s2: [__m256; 2] = std::array::from_fn(|i| {
        _mm256_add_ps(_mm256_shuffle_ps::<0x44>(s1[2 * i], s1[2 * i + 1]), _mm256_shuffle_ps::<0xEE>(s1[2 * i], s1[2 * i + 1]))
    });
    _mm256_add_ps(_mm256_permute2f128_ps::<0x20>(s2[0], s2[1]), _mm256_permute2f128_ps::<0x31>(s2[0], s2[1]))
}

/// [`rows`] on AVX2 and FMA (`hd = 16 · L`): 8 keys' scores at a time, each key's 16 lanes in two
/// registers, the tree's last step adding the halves' sums; the query's registers held across
/// the keys (a load per product, not two); the values 64 outputs at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma,f16c")]
fn rows_avx2<const L: usize, E: Elem>(a: &Args<E>) -> Vec<f32> {
    use std::arch::x86_64::*;
    let (g, hd, members) = (a.g, a.hd, a.qs.len());
    let most = a.keys.iter().copied().max().unwrap_or(0);
    let (stride, mut p) = a.scores();
    // SAFETY (every pointer below): rows lie inside the caches and heads inside the rows (checked by `rows`).
    unsafe {
        for t0 in (0..most).step_by(BLOCK) {
            for m in 0..members {
                for b0 in (t0..(t0 + BLOCK).min(a.keys[m])).step_by(8) {
                    let n = 8.min(a.keys[m] - b0);
                    let kr: [*const E; 8] = std::array::from_fn(|j| if j < n { a.row(a.ks, m, b0 + j) } else { std::ptr::null() });
                    for h in 0..g {
                        let q = a.qs[m][(a.kvh * g + h) * hd..].as_ptr();
                        // Each half's lanes (lo: 0..8, hi: 8..16) for the 8 keys, the query's
                        // registers of that half held 4 at a time (one load per product).
                        let mut halves = [[_mm256_setzero_ps(); 8]; 2];
                        for (half, acc) in halves.iter_mut().enumerate() {
                            for i0 in (0..L).step_by(4) {
                                let qv: [__m256; 4] = std::array::from_fn(|c| {
                                    if i0 + c < L {
                                        _mm256_loadu_ps(q.add(16 * (i0 + c) + 8 * half))
                                    } else {
                                        _mm256_setzero_ps()
                                    }
                                });
                                for j in 0..n {
                                    for (c, qc) in qv.iter().enumerate().take(L - i0) {
                                        let kv = ld8(kr[j].add(16 * (i0 + c) + 8 * half));
                                        acc[j] = if i0 + c == 0 { _mm256_mul_ps(*qc, kv) } else { _mm256_fmadd_ps(*qc, kv, acc[j]) };
                                    }
                                }
                            }
                        }
                        let sc = _mm256_mul_ps(_mm256_add_ps(hsum8(&halves[0]), hsum8(&halves[1])), _mm256_set1_ps(a.scale));
                        _mm256_storeu_ps(p[m][h * stride[m] + b0..].as_mut_ptr(), sc);
                    }
                }
            }
        }
    }
    a.softmax(&stride, &mut p);
    let mut out = vec![0f32; members * g * hd];
    unsafe {
        for t0 in (0..most).step_by(BLOCK) {
            for m in 0..members {
                let t1 = (t0 + BLOCK).min(a.keys[m]);
                for h in 0..g {
                    let o = out[(m * g + h) * hd..].as_mut_ptr();
                    // 64 outputs at a time (8 registers).
                    for c0 in (0..hd).step_by(64) {
                        let o = o.add(c0);
                        let mut acc: [__m256; 8] = std::array::from_fn(|i| _mm256_loadu_ps(o.add(8 * i)));
                        for t in t0..t1 {
                            let (wt, vr) = (_mm256_set1_ps(p[m][h * stride[m] + t]), a.row(a.vs, m, t).add(c0));
                            for (i, s) in acc.iter_mut().enumerate() {
                                *s = _mm256_fmadd_ps(wt, ld8(vr.add(8 * i)), *s);
                            }
                        }
                        for (i, s) in acc.iter().enumerate() {
                            _mm256_storeu_ps(o.add(8 * i), *s);
                        }
                    }
                }
            }
        }
    }
    out
}

/// Attention of one row in f64 (query heads `kvh · g ..`, `keys` positions): what the kernels
/// and the engine's attention are held to.
#[cfg(test)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn exact(q: &[f32], k: &[f32], v: &[f32], keys: usize, kvh: usize, g: usize, hd: usize, scale: f32) -> Vec<f32> {
    let mut out = Vec::new();
    for h in 0..g {
        let qh = &q[(kvh * g + h) * hd..(kvh * g + h + 1) * hd];
        let s: Vec<f64> = (0..keys).map(|t| (0..hd).map(|i| qh[i] as f64 * k[t * hd + i] as f64).sum::<f64>() * scale as f64).collect();
        let mx = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = s.iter().map(|x| (x - mx).exp()).collect();
        let z: f64 = e.iter().sum();
        out.extend((0..hd).map(|i| ((0..keys).map(|t| e[t] * v[t * hd + i] as f64).sum::<f64>() / z) as f32));
    }
    out
}

/// Slices of each vector (the tests' caches as `rows` takes them).
#[cfg(test)]
pub(crate) fn slices<T>(v: &[Vec<T>]) -> Vec<&[T]> {
    v.iter().map(Vec::as_slice).collect()
}

#[cfg(test)]
mod tests {
    use super::super::random;
    use super::*;

    /// Every level against the reference on caches of `E` (`to` converts), grouped and alone,
    /// and the reference near the exact attention over the values the cache holds.
    fn check<E: Elem>(to: impl Fn(&[f32]) -> Vec<E>) {
        for hd in [64, 128, 256] {
            let (nh, nkv) = (6, 2);
            let g = nh / nkv;
            let scale = 1.0 / (hd as f32).sqrt();
            // Three members copied from one another for 37 positions, then each its own; key
            // counts off the blocks (1, 37, 101, 130).
            let shared = 37;
            let (base_k, base_v) = (random(shared * hd, 1), random(shared * hd, 2));
            let keys = [40usize, 37, 101, 130];
            let own = |n: usize, s: u64| random((n - shared) * hd, s);
            let ks: Vec<Vec<E>> = keys.iter().enumerate().map(|(i, &n)| to(&[base_k.clone(), own(n, 10 + i as u64)].concat())).collect();
            let vs: Vec<Vec<E>> = keys.iter().enumerate().map(|(i, &n)| to(&[base_v.clone(), own(n, 20 + i as u64)].concat())).collect();
            let qs: Vec<Vec<f32>> = (0..keys.len()).map(|i| random(nh * hd, 30 + i as u64)).collect();
            let held = |c: &[Vec<E>]| -> Vec<Vec<f32>> { c.iter().map(|r| r.iter().map(|x| x.get()).collect()).collect() };
            let (kf, vf) = (held(&ks), held(&vs));
            for kvh in 0..nkv {
                let reference =
                    rows_reference(&Args { qs: &slices(&qs), ks: &slices(&ks), vs: &slices(&vs), keys: &keys, shared, kvh, g, hd, scale });
                for isa in Isa::runnable() {
                    let together = rows(isa, &slices(&qs), &slices(&ks), &slices(&vs), &keys, shared, kvh, g, hd, scale);
                    assert_eq!(together, reference, "{isa:?} hd {hd} kvh {kvh} half {}: grouped differs from the reference", E::HALF);
                    for m in 0..keys.len() {
                        let alone = rows(isa, &[&qs[m][..]], &[&ks[m][..]], &[&vs[m][..]], &keys[m..m + 1], keys[m], kvh, g, hd, scale);
                        assert_eq!(alone, reference[m * g * hd..(m + 1) * g * hd], "{isa:?} hd {hd} member {m} half {}: alone differs", E::HALF);
                    }
                }
                for m in 0..keys.len() {
                    let want = exact(&qs[m], &kf[m], &vf[m], keys[m], kvh, g, hd, scale);
                    for (a, b) in reference[m * g * hd..(m + 1) * g * hd].iter().zip(&want) {
                        assert!((a - b).abs() < 1e-5, "hd {hd} member {m}: {a} vs {b}");
                    }
                }
            }
        }
    }

    #[test]
    fn every_level_equals_the_reference_bit_for_bit_grouped_or_alone() {
        check::<f32>(|x| x.to_vec());
    }

    #[test]
    fn f16_caches_read_the_same_at_every_level() {
        check::<f16>(|x| x.iter().map(|&v| f16::from_f32(v)).collect());
        // The widening is exact: an f16 cache's reference is the f32 reference on the rounded values.
        let (hd, g) = (64, 3);
        let (k, v, q) = (random(50 * hd, 5), random(50 * hd, 6), random(g * hd, 7));
        let round = |x: &[f32]| -> (Vec<f16>, Vec<f32>) {
            let h: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
            let f = h.iter().map(|x| x.to_f32()).collect();
            (h, f)
        };
        let ((kh, kf), (vh, vf)) = (round(&k), round(&v));
        let a = rows(Isa::Scalar, &[&q[..]], &[&kh[..]], &[&vh[..]], &[50], 50, 0, g, hd, 0.125);
        let b = rows(Isa::Scalar, &[&q[..]], &[&kf[..]], &[&vf[..]], &[50], 50, 0, g, hd, 0.125);
        assert_eq!(a, b);
    }
}
