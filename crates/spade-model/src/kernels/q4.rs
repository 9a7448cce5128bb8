//! A Q4_1 matrix product (AVX-512 VNNI, AVX2, NEON) on the tiles and activations of [`super::q8`]:
//! weights in 4-bit blocks of 32 with an f16 scale `d` and an f16 minimum `m` (value `d · q + m`,
//! `q` in 0..=15, as GGUF's Q4_1 stores them), 16 output rows per tile; activations quantised to
//! 8 bits per block of 32 exactly as for the Q8_0 product.
//!
//! Why: single-stream decode reads every weight once per token, so on a core whose memory, not
//! its arithmetic, sets the pace it runs at bytes per token. Q4_1 takes 20 bytes per 32 values
//! (Q8_0: 34), and it is what the default model ships as: packing its dequantised layers again
//! gives back the file's own blocks (a block's minimum maps to `q = 0` and its maximum to 15, so
//! the scale and minimum come back to the same f16 values), which is what llama.cpp runs on the
//! same file.
//!
//! The arithmetic: per output and block, the integer dot product `Σ q · a` (unsigned nibbles
//! against signed activation bytes: no offset to correct, and on AVX2 `vpmaddubsw`'s pairs are at
//! most 2 · 15 · 127, so four groups add up in 16 bits), then two f32 fused multiply-adds,
//! `acc = i · (d_w · d_a) + acc` and `acc = m_w · (d_a · Σ a) + acc`. [`tile_scalar`] does the same
//! in scalar code, and the tests hold every level to it bit for bit.

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
use super::q8::row_groups;
#[cfg(target_arch = "x86_64")]
use super::q8::AHEAD;
use super::q8::{round_even, Acts, Packed, BLOCK, TILE};
use super::Isa;
use rayon::prelude::*;

/// The nibbles of one block of one tile: 16 rows × 32 values, laid out so that one 64-byte load
/// holds two 4-value groups of all 16 rows: the low nibble of byte `gg · 64 + r · 4 + j` is value
/// `4 · gg + j` of row `r`, its high nibble value `16 + 4 · gg + j` (`gg` in 0..4). Half a load
/// (32 bytes) is 8 rows (AVX2), a quarter (16 bytes) 4 rows (NEON).
#[derive(Clone)]
#[repr(C, align(64))]
struct TileBlock([u8; BLOCK * TILE / 2]);

/// An `(n, k)` weight in Q4_1 tiles (`y = x · Wᵀ`): block `b` of tile `t` at `t · k/32 + b`.
pub(crate) struct PackedQ4 {
    n: usize,
    k: usize,
    blocks: Vec<TileBlock>,
    /// Each block's 16 row scales `d`, in the blocks' order.
    scales: Vec<[half::f16; TILE]>,
    /// Each block's 16 row minimums `m`.
    mins: Vec<[half::f16; TILE]>,
}

/// Quantise one block of 32 values as Q4_1: `(d, m)` (f16) with `m = min x`, `d = (max x − m) / 15`
/// and `q = round((x − m) / d)` in 0..=15, computed against the f16 values stored.
fn quantise_block(x: &[f32], q: &mut [u8]) -> (half::f16, half::f16) {
    let (lo, hi) = x.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), &v| (l.min(v), h.max(v)));
    let (d, m) = (half::f16::from_f32((hi - lo) / 15.0), half::f16::from_f32(lo));
    let (df, mf) = (d.to_f32(), m.to_f32());
    let id = if df > 0.0 { 1.0 / df } else { 0.0 };
    for (q, &v) in q.iter_mut().zip(x) {
        *q = round_even((v - mf) * id).clamp(0.0, 15.0) as u8;
    }
    (d, m)
}

/// Where value `j` (0..32) of row `c` (0..16) lives in a [`TileBlock`]: `(byte, high nibble)`.
#[inline(always)]
fn place(c: usize, j: usize) -> (usize, bool) {
    let g = j / 4;
    ((g % 4) * TILE * 4 + c * 4 + j % 4, g >= 4)
}

impl PackedQ4 {
    /// Pack a row-major `(n, k)` f32 weight; `k` must be a multiple of 32.
    pub(crate) fn new(w: &[f32], n: usize, k: usize) -> PackedQ4 {
        assert!(k.is_multiple_of(BLOCK) && w.len() == n * k, "PackedQ4: k must be a multiple of {BLOCK} and w hold n·k values");
        let nb = k / BLOCK;
        let tiles = n.div_ceil(TILE);
        let mut blocks = vec![TileBlock([0; BLOCK * TILE / 2]); tiles * nb];
        let mut scales = vec![[half::f16::ZERO; TILE]; tiles * nb];
        let mut mins = vec![[half::f16::ZERO; TILE]; tiles * nb];
        // One tile per task.
        blocks.par_chunks_mut(nb).zip(scales.par_chunks_mut(nb)).zip(mins.par_chunks_mut(nb)).enumerate().for_each(
            |(t, ((blocks, scales), mins))| {
                let mut q = [0u8; BLOCK];
                for (r, row) in (t * TILE..n.min((t + 1) * TILE)).enumerate() {
                    for b in 0..nb {
                        (scales[b][r], mins[b][r]) = quantise_block(&w[row * k + b * BLOCK..row * k + (b + 1) * BLOCK], &mut q);
                        for (j, &v) in q.iter().enumerate() {
                            let (at, high) = place(r, j);
                            blocks[b].0[at] |= if high { v << 4 } else { v };
                        }
                    }
                }
            },
        );
        PackedQ4 { n, k, blocks, scales, mins }
    }

    /// The weight as the blocks hold it, `d · q + m` (the tests' exact product).
    #[cfg(test)]
    fn dequantise(&self) -> Vec<f32> {
        let nb = self.k / BLOCK;
        let mut w = vec![0f32; self.n * self.k];
        for row in 0..self.n {
            let (t, c) = (row / TILE, row % TILE);
            for b in 0..nb {
                let i = t * nb + b;
                for j in 0..BLOCK {
                    let (at, high) = place(c, j);
                    let byte = self.blocks[i].0[at];
                    let q = if high { byte >> 4 } else { byte & 15 };
                    w[row * self.k + b * BLOCK + j] = self.scales[i][c].to_f32() * q as f32 + self.mins[i][c].to_f32();
                }
            }
        }
        w
    }
}

impl Packed for PackedQ4 {
    fn rows(&self) -> usize {
        self.n
    }

    fn cols(&self) -> usize {
        self.k
    }

    fn tile(&self, isa: Isa, t: usize, x: &Acts, out: &mut [f32]) {
        let nb = self.k / BLOCK;
        let (blocks, scales, mins) = (&self.blocks[t * nb..(t + 1) * nb], &self.scales[t * nb..(t + 1) * nb], &self.mins[t * nb..(t + 1) * nb]);
        #[cfg(target_arch = "x86_64")]
        if isa >= Isa::Avx2 {
            use super::{by_rows, q8::group_rows};
            row_groups(x.m, group_rows(isa, x.m), out, |r0, r, o| {
                // SAFETY: the level is only what the CPU has (`Isa::supported`): AVX-512 F, BW and
                // VNNI, AVX2 with AVX-VNNI, or AVX2, FMA and F16C.
                unsafe {
                    match isa {
                        Isa::Avx512 => by_rows!(r, tile_vnni(blocks, scales, mins, x, r0, o)),
                        Isa::AvxVnni => by_rows!(r, tile_avxvnni(blocks, scales, mins, x, r0, o)),
                        _ => by_rows!(r, tile_avx2(blocks, scales, mins, x, r0, o)),
                    }
                }
            });
            return;
        }
        #[cfg(target_arch = "aarch64")]
        if isa.vector() {
            use super::q8::ROWS_NEON;
            row_groups(x.m, ROWS_NEON, out, |r0, r, o| match (isa == Isa::Dotprod, r) {
                (true, 1) => tile_neon::<1, true>(blocks, scales, mins, x, r0, o),
                (true, 2) => tile_neon::<2, true>(blocks, scales, mins, x, r0, o),
                (true, _) => tile_neon::<3, true>(blocks, scales, mins, x, r0, o),
                (false, 1) => tile_neon::<1, false>(blocks, scales, mins, x, r0, o),
                (false, 2) => tile_neon::<2, false>(blocks, scales, mins, x, r0, o),
                (false, _) => tile_neon::<3, false>(blocks, scales, mins, x, r0, o),
            });
            return;
        }
        let _ = isa;
        tile_scalar(blocks, scales, mins, x, out);
    }
}

/// One tile against every activation row in scalar code: the same integer sums and the same two
/// fused multiply-adds per block as the vector forms.
fn tile_scalar(blocks: &[TileBlock], scales: &[[half::f16; TILE]], mins: &[[half::f16; TILE]], x: &Acts, out: &mut [f32]) {
    let nb = x.k / BLOCK;
    for r in 0..x.m {
        for c in 0..TILE {
            let mut acc = 0f32;
            for (b, ((blk, d), m)) in blocks.iter().zip(scales).zip(mins).enumerate() {
                let a = &x.qs[r * x.k + b * BLOCK..r * x.k + (b + 1) * BLOCK];
                let mut s = 0i32;
                for (j, &av) in a.iter().enumerate() {
                    let (at, high) = place(c, j);
                    let q = if high { blk.0[at] >> 4 } else { blk.0[at] & 15 };
                    s += av as i32 * q as i32;
                }
                let at = r * nb + b;
                let da = x.d[at];
                acc = (s as f32).mul_add(d[c].to_f32() * da, acc);
                acc = m[c].to_f32().mul_add(da * x.sum(at) as f32, acc);
            }
            out[r * TILE + c] = acc;
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
fn tile_vnni<const R: usize>(blocks: &[TileBlock], scales: &[[half::f16; TILE]], mins: &[[half::f16; TILE]], x: &Acts, r0: usize, out: &mut [f32]) {
    use std::arch::x86_64::*;
    let nb = x.k / BLOCK;
    // Bounds checked once, here: the rows' activation bytes and scales, and `out`'s R rows.
    assert!((r0 + R) * x.k <= x.qs.len() && (r0 + R) * nb <= x.d.len() && R * TILE <= out.len());
    let qs = x.qs.as_ptr();
    let low = _mm512_set1_epi8(0x0F);
    let mut acc = [_mm512_setzero_ps(); R];
    for (b, ((blk, d), m)) in blocks.iter().zip(scales).zip(mins).enumerate() {
        let mut sums = [_mm512_setzero_si512(); R];
        for gg in 0..4 {
            // A hint only (never faults): see [`AHEAD`].
            _mm_prefetch::<_MM_HINT_T0>(blk.0.as_ptr().wrapping_add(AHEAD + gg * 64) as *const i8);
            // SAFETY: 64 bytes inside the block (4 × 64 bytes).
            let wv = unsafe { _mm512_loadu_si512(blk.0.as_ptr().add(gg * 64) as *const _) };
            let (lo, hi) = (_mm512_and_si512(wv, low), _mm512_and_si512(_mm512_srli_epi16(wv, 4), low));
            for (i, s) in sums.iter_mut().enumerate() {
                // SAFETY: 4 bytes each inside row r0 + i's block b (asserted above).
                let (a_lo, a_hi) = unsafe {
                    let row = qs.add((r0 + i) * x.k + b * BLOCK);
                    (std::ptr::read_unaligned(row.add(gg * 4) as *const i32), std::ptr::read_unaligned(row.add(16 + gg * 4) as *const i32))
                };
                *s = _mm512_dpbusd_epi32(*s, lo, _mm512_set1_epi32(a_lo));
                *s = _mm512_dpbusd_epi32(*s, hi, _mm512_set1_epi32(a_hi));
            }
        }
        // SAFETY: 16 f16 scales and 16 minimums (32 bytes each).
        let (dw, mw) =
            unsafe { (_mm512_cvtph_ps(_mm256_loadu_si256(d.as_ptr() as *const _)), _mm512_cvtph_ps(_mm256_loadu_si256(m.as_ptr() as *const _))) };
        for (i, a) in acc.iter_mut().enumerate() {
            let at = (r0 + i) * nb + b;
            let da = x.d[at];
            *a = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sums[i]), _mm512_mul_ps(dw, _mm512_set1_ps(da)), *a);
            *a = _mm512_fmadd_ps(mw, _mm512_set1_ps(da * x.sum(at) as f32), *a);
        }
    }
    for (i, a) in acc.iter().enumerate() {
        // SAFETY: `out` holds R rows of 16 floats (asserted above).
        unsafe { _mm512_storeu_ps(out.as_mut_ptr().add(i * TILE), *a) };
    }
}

/// The 256-bit Q4_1 tiles ([`tile_vnni`] on AVX2 and on AVX-VNNI), one body: `$vnni` picks the
/// integer step. A register holds half the tile (8 outputs): as in [`super::q8`]'s 256-bit tiles,
/// each block takes its halves in turn, up to 8 rows' sums in registers, the f32 accumulators in
/// `out`, the weights fetched [`AHEAD`] bytes before use.
#[cfg(target_arch = "x86_64")]
macro_rules! tile_256 {
    ($(#[$doc:meta])* $name:ident, $features:literal, $vnni:literal) => {
        $(#[$doc])*
        #[target_feature(enable = $features)]
        #[allow(unused_unsafe)]
        fn $name<const R: usize>(
            blocks: &[TileBlock],
            scales: &[[half::f16; TILE]],
            mins: &[[half::f16; TILE]],
            x: &Acts,
            r0: usize,
            out: &mut [f32],
        ) {
            use std::arch::x86_64::*;
            let nb = x.k / BLOCK;
            // Bounds checked once, here: the rows' activation bytes and scales, and `out`'s R rows.
            assert!((r0 + R) * x.k <= x.qs.len() && (r0 + R) * nb <= x.d.len() && R * TILE <= out.len());
            out[..R * TILE].fill(0.0);
            let (qs, o) = (x.qs.as_ptr(), out.as_mut_ptr());
            let (low, ones) = (_mm256_set1_epi8(0x0F), _mm256_set1_epi16(1));
            // A trip count the compiler cannot see, as in [`super::q8`]'s 256-bit tiles (an unrolled
            // loop turned inside out spills).
            let groups = std::hint::black_box(4);
            for (b, ((blk, d), m)) in blocks.iter().zip(scales).zip(mins).enumerate() {
                for half in 0..2 {
                    // i16 pair sums (AVX2) or i32 sums (AVX-VNNI).
                    let mut sums = [_mm256_setzero_si256(); R];
                    for gg in 0..groups.min(4) {
                        if half == 0 {
                            // A hint only (never faults): the line of the block AHEAD bytes on.
                            _mm_prefetch::<_MM_HINT_T0>(blk.0.as_ptr().wrapping_add(AHEAD + gg * 64) as *const i8);
                        }
                        // SAFETY: 32 bytes inside the block (group pair gg, this half).
                        let w = unsafe { _mm256_load_si256(blk.0.as_ptr().add(gg * 64 + half * 32) as *const _) };
                        let (lo, hi) = (_mm256_and_si256(w, low), _mm256_and_si256(_mm256_srli_epi16(w, 4), low));
                        for (i, s) in sums.iter_mut().enumerate() {
                            // SAFETY: 4 bytes each inside row r0 + i's block b (asserted above).
                            let (a_lo, a_hi) = unsafe {
                                let row = qs.add((r0 + i) * x.k + b * BLOCK);
                                (
                                    _mm256_set1_epi32(std::ptr::read_unaligned(row.add(gg * 4) as *const i32)),
                                    _mm256_set1_epi32(std::ptr::read_unaligned(row.add(16 + gg * 4) as *const i32)),
                                )
                            };
                            *s = if $vnni {
                                // SAFETY: reached only in the AVX-VNNI form, whose function
                                // enables the feature (there the block is not needed: the
                                // function allows that).
                                unsafe { _mm256_dpbusd_avx_epi32(_mm256_dpbusd_avx_epi32(*s, lo, a_lo), hi, a_hi) }
                            } else {
                                // Nibbles (unsigned) times activation bytes (signed) by `vpmaddubsw`
                                // (pairs at most 2 · 15 · 127 = 3,810), the block's eight groups
                                // added in 16 bits (at most 30,480), into i32 once per block.
                                _mm256_add_epi16(*s, _mm256_add_epi16(_mm256_maddubs_epi16(lo, a_lo), _mm256_maddubs_epi16(hi, a_hi)))
                            };
                        }
                    }
                    // SAFETY: 8 f16 scales and 8 minimums (16 bytes each) of this half.
                    let (dw, mw) = unsafe {
                        (
                            _mm256_cvtph_ps(_mm_loadu_si128(d.as_ptr().add(half * 8) as *const _)),
                            _mm256_cvtph_ps(_mm_loadu_si128(m.as_ptr().add(half * 8) as *const _)),
                        )
                    };
                    for (i, s) in sums.iter().enumerate() {
                        let at = (r0 + i) * nb + b;
                        let da = x.d[at];
                        let s = if $vnni { *s } else { _mm256_madd_epi16(*s, ones) };
                        // SAFETY: row i's 8 outputs of this half, inside `out` (asserted above).
                        unsafe {
                            let to = o.add(i * TILE + half * 8);
                            let acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(dw, _mm256_set1_ps(da)), _mm256_loadu_ps(to));
                            _mm256_storeu_ps(to, _mm256_fmadd_ps(mw, _mm256_set1_ps(da * x.sum(at) as f32), acc));
                        }
                    }
                }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
tile_256!(
    /// [`tile_vnni`] on AVX2.
    tile_avx2,
    "avx2,fma,f16c",
    false
);

#[cfg(target_arch = "x86_64")]
tile_256!(
    /// [`tile_vnni`] on AVX-VNNI: two `vpdpbusd` per row and group pair, straight into i32.
    tile_avxvnni,
    "avx2,fma,f16c,avxvnni",
    true
);

/// [`tile_vnni`] on NEON: a quarter of a load is 4 rows; the nibbles (0..=15, so also valid
/// signed bytes) against the row's 4 activation bytes, with `dotprod` by `sdot`, without it by
/// widening products (`smull`), pairs added in 16 bits, then into i32 (`sadalp`).
#[cfg(target_arch = "aarch64")]
fn tile_neon<const R: usize, const DOT: bool>(
    blocks: &[TileBlock],
    scales: &[[half::f16; TILE]],
    mins: &[[half::f16; TILE]],
    x: &Acts,
    r0: usize,
    out: &mut [f32],
) {
    use std::arch::aarch64::*;
    let nb = x.k / BLOCK;
    // SAFETY: NEON is part of every aarch64 target (`sdot` only where `DOT`, which the level gives
    // only where the CPU has it); every load is inside the block or the row.
    unsafe {
        let low = vdupq_n_u8(0x0F);
        let dot = |s: int32x4_t, q: int8x16_t, a: int8x16_t| -> int32x4_t {
            if DOT {
                super::q8::sdot(s, q, a)
            } else {
                let lo = vmull_s8(vget_low_s8(q), vget_low_s8(a));
                let hi = vmull_high_s8(q, a);
                vpadalq_s16(s, vpaddq_s16(lo, hi))
            }
        };
        let mut acc = [[vdupq_n_f32(0.0); 4]; R];
        for (b, ((blk, d), m)) in blocks.iter().zip(scales).zip(mins).enumerate() {
            let mut sums = [[vdupq_n_s32(0); 4]; R];
            for gg in 0..4 {
                let w: [uint8x16_t; 4] = [0, 1, 2, 3].map(|c| vld1q_u8(blk.0.as_ptr().add(gg * 64 + c * 16)));
                let lo = w.map(|v| vreinterpretq_s8_u8(vandq_u8(v, low)));
                let hi = w.map(|v| vreinterpretq_s8_u8(vshrq_n_u8::<4>(v)));
                for (i, s) in sums.iter_mut().enumerate() {
                    let row = x.qs.as_ptr().add((r0 + i) * x.k + b * BLOCK);
                    let a_lo = vreinterpretq_s8_s32(vdupq_n_s32(std::ptr::read_unaligned(row.add(gg * 4) as *const i32)));
                    let a_hi = vreinterpretq_s8_s32(vdupq_n_s32(std::ptr::read_unaligned(row.add(16 + gg * 4) as *const i32)));
                    for c in 0..4 {
                        s[c] = dot(dot(s[c], lo[c], a_lo), hi[c], a_hi);
                    }
                }
            }
            let dw: [f32; TILE] = d.map(|v| v.to_f32());
            let mw: [f32; TILE] = m.map(|v| v.to_f32());
            for i in 0..R {
                let at = (r0 + i) * nb + b;
                let da = x.d[at];
                let msum = vdupq_n_f32(da * x.sum(at) as f32);
                for c in 0..4 {
                    let scale = vmulq_f32(vld1q_f32(dw[4 * c..].as_ptr()), vdupq_n_f32(da));
                    acc[i][c] = vfmaq_f32(acc[i][c], vcvtq_f32_s32(sums[i][c]), scale);
                    acc[i][c] = vfmaq_f32(acc[i][c], vld1q_f32(mw[4 * c..].as_ptr()), msum);
                }
            }
        }
        for (i, a) in acc.iter().enumerate() {
            for (c, v) in a.iter().enumerate() {
                vst1q_f32(out[i * TILE + 4 * c..].as_mut_ptr(), *v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::random;
    use super::*;

    #[test]
    fn every_level_equals_the_scalar_reference_bit_for_bit() {
        // A constant block (d = 0); nibbles 0 and 15 against activations ±127.
        super::super::check_packed_product(
            |w, n, k| {
                let p = PackedQ4::new(w, n, k);
                let held = p.dequantise();
                (Box::new(p), held)
            },
            0.25,
        );
    }

    #[test]
    fn the_4_bit_weights_are_within_half_a_step_of_the_f32_ones() {
        let w = random(33 * 96, 1);
        let held = PackedQ4::new(&w, 33, 96).dequantise();
        for (b, (a, h)) in w.chunks(BLOCK).zip(held.chunks(BLOCK)).enumerate() {
            let (lo, hi) = a.iter().fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), &v| (l.min(v), h.max(v)));
            let step = (hi - lo) / 15.0;
            for (u, v) in a.iter().zip(h) {
                assert!((u - v).abs() <= 0.5 * step + 1e-3 * (1.0 + u.abs()), "block {b}: {u} vs {v}");
            }
        }
    }

    #[test]
    fn the_default_models_layers_pack_back_to_the_files_blocks() {
        let path = crate::default_model_path();
        if !path.exists() {
            eprintln!("skipped: no default model at {}", path.display());
            return;
        }
        let m = crate::load(&path, &candle_core::Device::Cpu).unwrap();
        for i in [0, 17, 29] {
            for s in ["self_attn.q_proj.weight", "self_attn.v_proj.weight", "mlp.down_proj.weight"] {
                let name = crate::weights::layer_name(i, s);
                let w = m.weights().get(&name).unwrap();
                let (n, k) = w.dims2().unwrap();
                let v = w.flatten_all().unwrap().to_vec1::<f32>().unwrap();
                let back = PackedQ4::new(&v, n, k).dequantise();
                let differ = back.iter().zip(&v).filter(|(a, b)| a != b).count();
                assert_eq!(differ, 0, "{name}: {differ} of {} values differ from the file's", v.len());
            }
        }
    }

    #[test]
    fn a_q4_1_weight_packs_back_to_its_own_values() {
        // Blocks as GGUF's Q4_1 makes them: f16 scale and minimum, nibbles spanning 0..=15.
        let (n, k) = (20, 64);
        let noise = random(n * k, 9);
        let mut w = vec![0f32; n * k];
        for (b, block) in w.chunks_mut(BLOCK).enumerate() {
            let d = half::f16::from_f32(0.01 + 0.003 * b as f32).to_f32();
            let m = half::f16::from_f32(-0.05 * (b % 5) as f32 - 0.02).to_f32();
            for (j, v) in block.iter_mut().enumerate() {
                let q = match j {
                    0 => 0.0,
                    1 => 15.0,
                    _ => ((noise[b * BLOCK + j] + 1.0) * 7.5).floor().min(15.0),
                };
                *v = d * q + m;
            }
        }
        assert_eq!(PackedQ4::new(&w, n, k).dequantise(), w);
    }
}
