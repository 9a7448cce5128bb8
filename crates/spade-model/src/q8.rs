//! A Q8_0 matrix product on AVX-512 VNNI: weights in 8-bit blocks of 32 with an f32 scale,
//! packed in tiles of 16 output rows so that one `vpdpbusd` adds four products to each of 16
//! outputs; activations quantised per row the same way (one pass, shared by every tile).
//!
//! Why our own: candle's generic Q8_0 product walks the output columns four at a time per
//! activation row (the weights are read once per row), and its repacked VNNI kernel needs the
//! inner dimension to be a multiple of 256, which SmolLM2's 576 is not. Here every 16-row tile
//! is read once per step and used for up to [`ROWS`] activation rows at a time, so single-stream
//! decode streams the weights at the memory's pace and batched decode and prefill reuse them
//! from cache.
//!
//! The weights take 34 bytes per 32 values, as GGUF's Q8_0 does: the bytes stored offset by 128
//! (`vpdpbusd` multiplies unsigned by signed bytes) and an f16 scale. The arithmetic is exact up
//! to one f32 fused multiply-add per block: per output and block, the integer dot product
//! `Σ (w + 128) · a − 128 · Σ a` (the correction depends on the activations only, so it is
//! computed once per activation block) is converted to f32 and accumulated as
//! `acc = i · (d_w · d_a) + acc`. [`matmul_reference`] does the same in scalar code, and the
//! tests hold the kernel to it bit for bit.
//!
//! Used only where the CPU has AVX-512 F, BW and VNNI ([`available`]); elsewhere the Q8_0
//! representation runs on candle's quantised product as before.

use rayon::prelude::*;

/// Values per block (one scale each).
pub(crate) const BLOCK: usize = 32;
/// Output rows per tile (one 512-bit register of i32 or f32).
const TILE: usize = 16;
/// Activation rows a tile is applied to at a time (accumulators kept in registers).
const ROWS: usize = 8;

/// The bytes of one block of one tile: 16 rows × 32 values, each stored as `q + 128`, laid out
/// `[group of 4 values][row][4 bytes]` so that one 64-byte load feeds a `vpdpbusd` for all 16
/// rows.
#[derive(Clone)]
#[repr(C, align(64))]
struct TileBlock([u8; BLOCK * TILE]);

/// An `(n, k)` weight in Q8_0 tiles (`y = x · Wᵀ`): block `b` of tile `t` at `t · k/32 + b`.
pub(crate) struct PackedQ8 {
    n: usize,
    k: usize,
    blocks: Vec<TileBlock>,
    /// Each block's 16 row scales, in the blocks' order.
    scales: Vec<[half::f16; TILE]>,
}

/// Whether this CPU runs the kernel.
pub(crate) fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw") && std::is_x86_feature_detected!("avx512vnni")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Quantise one block of 32 values: `(scale, q)` with `q = round(x / scale)` (ties to even, as
/// the vector conversion rounds), `scale = max|x| / 127`.
fn quantise_block(x: &[f32], q: &mut [i8]) -> f32 {
    let amax = x.iter().fold(0f32, |m, v| m.max(v.abs()));
    let d = amax / 127.0;
    let id = if d > 0.0 { 1.0 / d } else { 0.0 };
    for (q, &v) in q.iter_mut().zip(x) {
        *q = (v * id).round_ties_even().clamp(-127.0, 127.0) as i8;
    }
    d
}

impl PackedQ8 {
    /// Pack a row-major `(n, k)` f32 weight; `k` must be a multiple of 32.
    pub(crate) fn new(w: &[f32], n: usize, k: usize) -> PackedQ8 {
        assert!(k.is_multiple_of(BLOCK) && w.len() == n * k, "PackedQ8: k must be a multiple of {BLOCK} and w hold n·k values");
        let nb = k / BLOCK;
        let tiles = n.div_ceil(TILE);
        let mut blocks = vec![TileBlock([128; BLOCK * TILE]); tiles * nb];
        let mut scales = vec![[half::f16::ZERO; TILE]; tiles * nb];
        let mut q = [0i8; BLOCK];
        for row in 0..n {
            let (t, r) = (row / TILE, row % TILE);
            for b in 0..nb {
                let d = quantise_block(&w[row * k + b * BLOCK..row * k + (b + 1) * BLOCK], &mut q);
                scales[t * nb + b][r] = half::f16::from_f32(d);
                for (j, &v) in q.iter().enumerate() {
                    blocks[t * nb + b].0[(j / 4) * TILE * 4 + r * 4 + j % 4] = (v as u8) ^ 0x80;
                }
            }
        }
        PackedQ8 { n, k, blocks, scales }
    }

    pub(crate) fn rows(&self) -> usize {
        self.n
    }

    pub(crate) fn cols(&self) -> usize {
        self.k
    }
}

/// Activations quantised per row and block.
pub(crate) struct Acts {
    m: usize,
    k: usize,
    qs: Vec<i8>,
    d: Vec<f32>,
    /// Each block's `128 · Σ q` (what the weights' offset adds to the integer dot product).
    offset: Vec<i32>,
}

/// Quantise `m` rows of `k` values.
pub(crate) fn quantise_rows(x: &[f32], m: usize, k: usize) -> Acts {
    assert!(k.is_multiple_of(BLOCK) && x.len() == m * k, "quantise_rows: k must be a multiple of {BLOCK}");
    let mut qs = vec![0i8; m * k];
    let mut d = vec![0f32; m * k / BLOCK];
    #[cfg(target_arch = "x86_64")]
    let vector = available();
    #[cfg(not(target_arch = "x86_64"))]
    let vector = false;
    if vector {
        // SAFETY: the CPU has AVX-512 F and BW (checked by `available`).
        #[cfg(target_arch = "x86_64")]
        unsafe {
            quantise_avx512(x, &mut qs, &mut d)
        };
    } else {
        for (i, (xb, ob)) in x.chunks(BLOCK).zip(qs.chunks_mut(BLOCK)).enumerate() {
            d[i] = quantise_block(xb, ob);
        }
    }
    let offset = qs.chunks(BLOCK).map(|b| 128 * b.iter().map(|&v| v as i32).sum::<i32>()).collect();
    Acts { m, k, qs, d, offset }
}

/// [`quantise_block`] over whole rows, 32 values per step, into unsigned bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw")]
fn quantise_avx512(x: &[f32], qs: &mut [i8], d: &mut [f32]) {
    use std::arch::x86_64::*;
    for ((xb, ob), d) in x.chunks_exact(BLOCK).zip(qs.chunks_exact_mut(BLOCK)).zip(d.iter_mut()) {
        // SAFETY: 32 floats in `xb`, 32 bytes in `ob`.
        unsafe {
            let (lo, hi) = (_mm512_loadu_ps(xb.as_ptr()), _mm512_loadu_ps(xb.as_ptr().add(16)));
            let amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(lo), _mm512_abs_ps(hi)));
            let scale = amax / 127.0;
            let id = _mm512_set1_ps(if scale > 0.0 { 1.0 / scale } else { 0.0 });
            for (half, v) in [lo, hi].into_iter().enumerate() {
                // Round to nearest even (the default mode); |v · id| ≤ 127, so no saturation.
                let q = _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(_mm512_mul_ps(v, id)));
                _mm_storeu_si128(ob.as_mut_ptr().add(half * 16) as *mut _, q);
            }
            *d = scale;
        }
    }
}

/// `x · Wᵀ` for the `m` rows of `x` (quantised by [`quantise_rows`]): `(m, n)` row-major.
pub(crate) fn matmul(w: &PackedQ8, x: &Acts) -> Vec<f32> {
    matmul_many(&[w], x).pop().expect("one product")
}

/// `x · Wᵢᵀ` for several weights sharing the input (a layer's q, k and v; its gate and up): one
/// quantisation of `x` and one parallel pass over all their tiles.
pub(crate) fn matmul_many(ws: &[&PackedQ8], x: &Acts) -> Vec<Vec<f32>> {
    assert!(ws.iter().all(|w| w.k == x.k), "matmul: inner dimensions differ");
    let (m, nb) = (x.m, x.k / BLOCK);
    // Global tile index → (weight, tile): the first global tile of each weight.
    let firsts: Vec<usize> = ws.iter().scan(0, |at, w| Some(std::mem::replace(at, *at + w.n.div_ceil(TILE)))).collect();
    let tiles: usize = ws.iter().map(|w| w.n.div_ceil(TILE)).sum();
    // Tile-major output: tile t owns 16·m consecutive floats (`[row][16]`), so the tasks write
    // disjoint chunks; transposed into `(m, n)` at the end.
    let mut tiled = vec![0f32; tiles * TILE * m];
    // Enough tiles per task (~256 block-rows, a few microseconds) to outweigh the pool's hand-off.
    let per_task = (256 / (nb * m).max(1)).max(1);
    tiled.par_chunks_mut(TILE * m).with_min_len(per_task).enumerate().for_each(|(g, out)| {
        let i = firsts.partition_point(|&f| f <= g) - 1;
        let (w, t) = (ws[i], g - firsts[i]);
        tile(&w.blocks[t * nb..(t + 1) * nb], &w.scales[t * nb..(t + 1) * nb], x, out);
    });
    ws.iter()
        .zip(&firsts)
        .map(|(w, &first)| {
            let n = w.n;
            let mut y = vec![0f32; m * n];
            for t in 0..n.div_ceil(TILE) {
                let chunk = &tiled[(first + t) * TILE * m..(first + t + 1) * TILE * m];
                let cols = TILE.min(n - t * TILE);
                for (r, vals) in chunk.chunks(TILE).enumerate() {
                    y[r * n + t * TILE..r * n + t * TILE + cols].copy_from_slice(&vals[..cols]);
                }
            }
            y
        })
        .collect()
}

/// One tile against every activation row: `out` is `[row][16]`.
fn tile(blocks: &[TileBlock], scales: &[[half::f16; TILE]], x: &Acts, out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if available() {
        let mut r0 = 0;
        while r0 < x.m {
            let r = (x.m - r0).min(ROWS);
            let o = &mut out[r0 * TILE..(r0 + r) * TILE];
            // SAFETY: the CPU has AVX-512 F, BW and VNNI (checked by `available`).
            unsafe {
                match r {
                    1 => tile_vnni::<1>(blocks, scales, x, r0, o),
                    2 => tile_vnni::<2>(blocks, scales, x, r0, o),
                    3 => tile_vnni::<3>(blocks, scales, x, r0, o),
                    4 => tile_vnni::<4>(blocks, scales, x, r0, o),
                    5 => tile_vnni::<5>(blocks, scales, x, r0, o),
                    6 => tile_vnni::<6>(blocks, scales, x, r0, o),
                    7 => tile_vnni::<7>(blocks, scales, x, r0, o),
                    _ => tile_vnni::<8>(blocks, scales, x, r0, o),
                }
            }
            r0 += r;
        }
        return;
    }
    tile_scalar(blocks, scales, x, out);
}

/// [`tile`] in scalar code: the same integer sums and the same fused multiply-add per block.
fn tile_scalar(blocks: &[TileBlock], scales: &[[half::f16; TILE]], x: &Acts, out: &mut [f32]) {
    let nb = x.k / BLOCK;
    for r in 0..x.m {
        for c in 0..TILE {
            let mut acc = 0f32;
            for (b, (blk, d)) in blocks.iter().zip(scales).enumerate() {
                let a = &x.qs[r * x.k + b * BLOCK..r * x.k + (b + 1) * BLOCK];
                let mut s = 0i32;
                for (j, &av) in a.iter().enumerate() {
                    s += av as i32 * blk.0[(j / 4) * TILE * 4 + c * 4 + j % 4] as i32;
                }
                let scale = d[c].to_f32() * x.d[r * nb + b];
                acc = ((s - x.offset[r * nb + b]) as f32).mul_add(scale, acc);
            }
            out[r * TILE + c] = acc;
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
fn tile_vnni<const R: usize>(blocks: &[TileBlock], scales: &[[half::f16; TILE]], x: &Acts, r0: usize, out: &mut [f32]) {
    use std::arch::x86_64::*;
    let nb = x.k / BLOCK;
    let mut acc = [_mm512_setzero_ps(); R];
    for (b, (blk, d)) in blocks.iter().zip(scales).enumerate() {
        let mut sums = [_mm512_setzero_si512(); R];
        // This block's 32 activation bytes of each row (bounds checked once, here).
        let rows: [&[i8]; R] = std::array::from_fn(|i| &x.qs[(r0 + i) * x.k + b * BLOCK..(r0 + i) * x.k + (b + 1) * BLOCK]);
        for g in 0..BLOCK / 4 {
            // SAFETY: 64 bytes inside the block's `qs` (8 groups × 64 bytes).
            let wv = unsafe { _mm512_loadu_si512(blk.0.as_ptr().add(g * 64) as *const _) };
            for (s, a) in sums.iter_mut().zip(&rows) {
                // SAFETY: 4 bytes inside the row's block of 32.
                let a = unsafe { std::ptr::read_unaligned(a.as_ptr().add(g * 4) as *const i32) };
                *s = _mm512_dpbusd_epi32(*s, wv, _mm512_set1_epi32(a));
            }
        }
        // SAFETY: 16 f16 scales (32 bytes).
        let dw = unsafe { _mm512_cvtph_ps(_mm256_loadu_si256(d.as_ptr() as *const _)) };
        for i in 0..R {
            let at = (r0 + i) * nb + b;
            let scale = _mm512_mul_ps(dw, _mm512_set1_ps(x.d[at]));
            let s = _mm512_sub_epi32(sums[i], _mm512_set1_epi32(x.offset[at]));
            acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), scale, acc[i]);
        }
    }
    for (i, a) in acc.iter().enumerate() {
        // SAFETY: `out` holds R rows of 16 floats.
        unsafe { _mm512_storeu_ps(out[i * TILE..].as_mut_ptr(), *a) };
    }
}

/// [`matmul`] in scalar code, for the tests and machines without the kernel.
#[cfg(test)]
fn matmul_reference(w: &PackedQ8, x: &Acts) -> Vec<f32> {
    let (m, n, nb) = (x.m, w.n, w.k / BLOCK);
    let mut y = vec![0f32; m * n];
    for t in 0..n.div_ceil(TILE) {
        let mut out = vec![0f32; m * TILE];
        tile_scalar(&w.blocks[t * nb..(t + 1) * nb], &w.scales[t * nb..(t + 1) * nb], x, &mut out);
        for r in 0..m {
            for c in 0..TILE.min(n - t * TILE) {
                y[r * n + t * TILE + c] = out[r * TILE + c];
            }
        }
    }
    y
}

/// `n` values uniform in [-1, 1) from `seed` (the kernels' tests).
#[cfg(test)]
pub(crate) fn random(n: usize, seed: u64) -> Vec<f32> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_quantisation_equals_the_scalar_one() {
        let mut x = random(4 * 96, 3);
        // A block whose values fall on half steps (ties, rounded to even by both).
        x[..BLOCK].iter_mut().enumerate().for_each(|(j, v)| *v = if j == 0 { 127.0 } else { j as f32 + 0.5 });
        let a = quantise_rows(&x, 4, 96);
        let mut q = [0i8; BLOCK];
        for (b, xb) in x.chunks(BLOCK).enumerate() {
            assert_eq!(quantise_block(xb, &mut q), a.d[b]);
            assert_eq!(q, a.qs[b * BLOCK..(b + 1) * BLOCK], "block {b}");
            assert_eq!(a.offset[b], 128 * q.iter().map(|&v| v as i32).sum::<i32>());
        }
    }

    #[test]
    fn the_kernel_equals_the_scalar_reference_bit_for_bit() {
        // Rows not a multiple of the tile, every row-group size, a zero block.
        for &(m, n, k) in &[(1, 40, 64), (3, 16, 32), (6, 33, 96), (9, 200, 576), (21, 48, 128)] {
            let mut w = random(n * k, 1);
            w[..BLOCK].fill(0.0);
            let x = random(m * k, 2);
            let p = PackedQ8::new(&w, n, k);
            let a = quantise_rows(&x, m, k);
            let y = matmul(&p, &a);
            assert_eq!(y, matmul_reference(&p, &a), "m={m} n={n} k={k}");
            // Several weights in one pass: each product as alone.
            let p2 = PackedQ8::new(&random(7 * k, 4), 7, k);
            let both = matmul_many(&[&p2, &p, &p2], &a);
            assert_eq!((&both[0], &both[1], &both[2]), (&matmul(&p2, &a), &y, &matmul(&p2, &a)));
            // And close to the f32 product.
            for r in 0..m {
                for c in 0..n {
                    let exact: f32 = (0..k).map(|j| x[r * k + j] * w[c * k + j]).sum();
                    assert!((y[r * n + c] - exact).abs() < 0.02 * (k as f32).sqrt(), "m={m} n={n} k={k} ({r},{c}): {} vs {exact}", y[r * n + c]);
                }
            }
        }
    }
}
