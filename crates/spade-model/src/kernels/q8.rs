//! A Q8_0 matrix product (AVX-512 VNNI, AVX2, NEON): weights in 8-bit blocks of 32 with an f16 scale,
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
//! On AVX2 (no VNNI) the same tiles run on `vpmaddubsw`/`vpmaddwd`, the way llama.cpp's AVX2
//! path does: the weight byte's sign moved onto the activation (`vpsignb`) so that the unsigned
//! operand is `|q| ≤ 127` and a pair of products cannot saturate 16 bits; the integer sums are
//! the same, so are the outputs. On ARM the same tiles run on NEON (`sdot` where the CPU has
//! the dot-product instructions). The level is [`super::isa`]'s; at `scalar` the reference runs.

use super::Isa;
use rayon::prelude::*;

/// Values per block (one scale each).
pub(crate) const BLOCK: usize = 32;
/// Output rows per tile (one 512-bit register of i32 or f32).
pub(crate) const TILE: usize = 16;
/// Activation rows a tile is applied to at a time (accumulators kept in registers): AVX-512.
#[cfg(target_arch = "x86_64")]
pub(crate) const ROWS: usize = 8;
/// The same on AVX2 (half the tile per register) where there are more than [`ROWS`]: from cache
/// (the weights are read once per group), 4 rows a group came out faster than 8.
#[cfg(target_arch = "x86_64")]
pub(crate) const ROWS_AVX2: usize = 4;
/// How far ahead (bytes) the x86-64 products fetch the weights (their next tiles follow in memory).
#[cfg(target_arch = "x86_64")]
pub(crate) const AHEAD: usize = 4096;
/// The same on NEON (a quarter of the tile per register).
#[cfg(target_arch = "aarch64")]
pub(crate) const ROWS_NEON: usize = 3;

/// A weight packed in tiles of [`TILE`] output rows for one of the integer kernels (Q8_0 here,
/// Q4_1 in [`super::q4`]): what [`matmul_many`] schedules.
pub(crate) trait Packed: Send + Sync {
    /// Output rows `n`.
    fn rows(&self) -> usize;
    /// Inner dimension `k`.
    fn cols(&self) -> usize;
    /// Tile `t` (output rows `16·t..`) against every row of `x` at level `isa`: `out` is `[row][16]`.
    fn tile(&self, isa: Isa, t: usize, x: &Acts, out: &mut [f32]);
}

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

/// Whether the engine packs Q8_0 weights for this kernel: on x86-64 and aarch64 at every level
/// (at `scalar` the reference tile, so a CPU without the vector levels, or a forced
/// `SPADE_ISA=scalar`, computes the same bits as they do); elsewhere candle's quantised product.
pub(crate) fn available() -> bool {
    cfg!(any(target_arch = "x86_64", target_arch = "aarch64"))
}

/// Quantise one block of 32 values: `(scale, q)` with `q = round(x / scale)` (ties to even, as
/// the vector conversion rounds), `scale = max|x| / 127`.
fn quantise_block(x: &[f32], q: &mut [i8]) -> f32 {
    let (d, id) = scales(x.iter().fold(0f32, |m, v| m.max(v.abs())));
    for (q, &v) in q.iter_mut().zip(x) {
        *q = round_even(v * id).clamp(-127.0, 127.0) as i8;
    }
    d
}

/// A block's scale `max|x| / 127` and its inverse (0 for an all-zero block): what every level's
/// quantisation multiplies by, so that they round the same values.
#[inline(always)]
fn scales(amax: f32) -> (f32, f32) {
    let d = amax / 127.0;
    (d, if d > 0.0 { 1.0 / d } else { 0.0 })
}

/// `y.round_ties_even()` for |y| < 2²² (here |y| ≤ 127), inline: adding and removing 1.5 · 2²³
/// leaves no fraction bits, and the default rounding mode rounds the sum to even.
/// (`round_ties_even` is a call to libm's `rintf` without SSE4.1: a fifth of a decode's start-up.)
#[inline(always)]
pub(crate) fn round_even(y: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0;
    (y + MAGIC) - MAGIC
}

impl PackedQ8 {
    /// Pack a row-major `(n, k)` f32 weight; `k` must be a multiple of 32.
    pub(crate) fn new(w: &[f32], n: usize, k: usize) -> PackedQ8 {
        assert!(k.is_multiple_of(BLOCK) && w.len() == n * k, "PackedQ8: k must be a multiple of {BLOCK} and w hold n·k values");
        let nb = k / BLOCK;
        let tiles = n.div_ceil(TILE);
        let mut blocks = vec![TileBlock([128; BLOCK * TILE]); tiles * nb];
        let mut scales = vec![[half::f16::ZERO; TILE]; tiles * nb];
        // One tile per task (the model's load packs ~130 M values).
        blocks.par_chunks_mut(nb).zip(scales.par_chunks_mut(nb)).enumerate().for_each(|(t, (blocks, scales))| {
            let mut q = [0i8; BLOCK];
            for (r, row) in (t * TILE..n.min((t + 1) * TILE)).enumerate() {
                for b in 0..nb {
                    let d = quantise_block(&w[row * k + b * BLOCK..row * k + (b + 1) * BLOCK], &mut q);
                    scales[b][r] = half::f16::from_f32(d);
                    for (j, &v) in q.iter().enumerate() {
                        blocks[b].0[(j / 4) * TILE * 4 + r * 4 + j % 4] = (v as u8) ^ 0x80;
                    }
                }
            }
        });
        PackedQ8 { n, k, blocks, scales }
    }
}

impl Packed for PackedQ8 {
    fn rows(&self) -> usize {
        self.n
    }

    fn cols(&self) -> usize {
        self.k
    }

    fn tile(&self, isa: Isa, t: usize, x: &Acts, out: &mut [f32]) {
        let nb = self.k / BLOCK;
        tile(isa, &self.blocks[t * nb..(t + 1) * nb], &self.scales[t * nb..(t + 1) * nb], x, out);
    }
}

/// Activations quantised per row and block.
pub(crate) struct Acts {
    pub(crate) m: usize,
    pub(crate) k: usize,
    pub(crate) qs: Vec<i8>,
    pub(crate) d: Vec<f32>,
    /// Each block's `128 · Σ q` (what the weights' offset adds to the integer dot product).
    offset: Vec<i32>,
}

impl Acts {
    /// Block `at`'s (row-major over rows and blocks) `Σ q`.
    #[inline(always)]
    pub(crate) fn sum(&self, at: usize) -> i32 {
        self.offset[at] / 128
    }
}

/// Quantise `m` rows of `k` values.
pub(crate) fn quantise_rows(x: &[f32], m: usize, k: usize) -> Acts {
    quantise_rows_on(super::isa(), x, m, k)
}

/// [`quantise_rows`] at level `isa`.
fn quantise_rows_on(isa: Isa, x: &[f32], m: usize, k: usize) -> Acts {
    assert!(k.is_multiple_of(BLOCK) && x.len() == m * k, "quantise_rows: k must be a multiple of {BLOCK}");
    let mut qs = vec![0i8; m * k];
    let mut d = vec![0f32; m * k / BLOCK];
    if isa == Isa::Avx512 {
        // SAFETY: the level is only AVX-512 where the CPU has F and BW (`Isa::supported`).
        #[cfg(target_arch = "x86_64")]
        unsafe {
            quantise_avx512(x, &mut qs, &mut d)
        };
    } else if isa >= Isa::Avx2 {
        // SAFETY: the level is only AVX2 (or AVX-VNNI, which has it) where the CPU has AVX2 and FMA (`Isa::supported`).
        #[cfg(target_arch = "x86_64")]
        unsafe {
            quantise_avx2(x, &mut qs, &mut d)
        };
    } else {
        for (i, (xb, ob)) in x.chunks(BLOCK).zip(qs.chunks_mut(BLOCK)).enumerate() {
            d[i] = quantise_block(xb, ob);
        }
    }
    let offset = qs.chunks(BLOCK).map(|b| 128 * b.iter().map(|&v| v as i32).sum::<i32>()).collect();
    Acts { m, k, qs, d, offset }
}

/// [`quantise_avx512`] on AVX2: eight floats per register, the bytes packed in 16 then 8 bits
/// (per 128-bit lane) and put back in order by one permute.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn quantise_avx2(x: &[f32], qs: &mut [i8], d: &mut [f32]) {
    use std::arch::x86_64::*;
    let sign = _mm256_set1_ps(-0.0);
    for ((xb, ob), d) in x.chunks_exact(BLOCK).zip(qs.chunks_exact_mut(BLOCK)).zip(d.iter_mut()) {
        // SAFETY: 32 floats in `xb`, 32 bytes in `ob`.
        unsafe {
            let v: [__m256; 4] = std::array::from_fn(|i| _mm256_loadu_ps(xb.as_ptr().add(8 * i)));
            let m = _mm256_max_ps(
                _mm256_max_ps(_mm256_andnot_ps(sign, v[0]), _mm256_andnot_ps(sign, v[1])),
                _mm256_max_ps(_mm256_andnot_ps(sign, v[2]), _mm256_andnot_ps(sign, v[3])),
            );
            let m = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
            let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
            let amax = _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps(m, m, 1)));
            let (scale, id) = scales(amax);
            let id = _mm256_set1_ps(id);
            // Round to nearest even (the default mode); |v · id| ≤ 127, so no saturation.
            let q: [__m256i; 4] = std::array::from_fn(|i| _mm256_cvtps_epi32(_mm256_mul_ps(v[i], id)));
            let bytes = _mm256_packs_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
            // Lanes hold [0-3, 8-11, 16-19, 24-27 | 4-7, 12-15, 20-23, 28-31] in groups of 4.
            let bytes = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            _mm256_storeu_si256(ob.as_mut_ptr() as *mut _, bytes);
            *d = scale;
        }
    }
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
            let (scale, id) = scales(amax);
            let id = _mm512_set1_ps(id);
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
pub(crate) fn matmul(w: &dyn Packed, x: &Acts) -> Vec<f32> {
    matmul_many(&[w], x).pop().expect("one product")
}

/// `x · Wᵢᵀ` for several weights sharing the input (a layer's q, k and v; its gate and up): one
/// quantisation of `x` and one parallel pass over all their tiles.
pub(crate) fn matmul_many(ws: &[&dyn Packed], x: &Acts) -> Vec<Vec<f32>> {
    matmul_many_on(super::isa(), ws, x)
}

/// [`matmul_many`] at level `isa`.
pub(crate) fn matmul_many_on(isa: Isa, ws: &[&dyn Packed], x: &Acts) -> Vec<Vec<f32>> {
    assert!(ws.iter().all(|w| w.cols() == x.k), "matmul: inner dimensions differ");
    let (m, nb) = (x.m, x.k / BLOCK);
    // Global tile index → (weight, tile): the first global tile of each weight.
    let firsts: Vec<usize> = ws.iter().scan(0, |at, w| Some(std::mem::replace(at, *at + w.rows().div_ceil(TILE)))).collect();
    let tiles: usize = ws.iter().map(|w| w.rows().div_ceil(TILE)).sum();
    let mut ys: Vec<Vec<f32>> = ws.iter().map(|w| vec![0f32; m * w.rows()]).collect();
    let outs: Vec<Out> = ys.iter_mut().map(|y| Out(y.as_mut_ptr())).collect();
    // Enough tiles per task (~256 block-rows, a few microseconds) to outweigh the pool's hand-off.
    let per_task = (256 / (nb * m).max(1)).max(1);
    // Each tile computes into a task's own `[row][16]` buffer (hot in L1), then writes its 16
    // columns of every row of its weight's output.
    (0..tiles).into_par_iter().with_min_len(per_task).for_each_init(
        || vec![0f32; TILE * m],
        |buf, g| {
            let i = firsts.partition_point(|&f| f <= g) - 1;
            let (t, n) = (g - firsts[i], ws[i].rows());
            ws[i].tile(isa, t, x, buf);
            let cols = TILE.min(n - t * TILE);
            for (r, vals) in buf.chunks(TILE).enumerate() {
                // SAFETY: row r's columns 16·t.. of weight i's `(m, n)` output, inside it; no other
                // tile writes them, and `ys` outlives the loop.
                unsafe { std::ptr::copy_nonoverlapping(vals.as_ptr(), outs[i].0.add(r * n + t * TILE), cols) };
            }
        },
    );
    ys
}

/// A product's output, written by the tasks of [`matmul_many_on`] at disjoint places.
struct Out(*mut f32);
// SAFETY: only ever written at places no other task writes (see its use).
unsafe impl Sync for Out {}

/// One tile against every activation row: `out` is `[row][16]`.
fn tile(isa: Isa, blocks: &[TileBlock], scales: &[[half::f16; TILE]], x: &Acts, out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx2 {
        row_groups(x.m, group_rows(isa, x.m), out, |r0, r, o| {
            // SAFETY: the level is only what the CPU has (`Isa::supported`): AVX-512 F, BW and
            // VNNI, AVX2 with AVX-VNNI, or AVX2, FMA and F16C.
            unsafe {
                match isa {
                    Isa::Avx512 => super::by_rows!(r, tile_vnni(blocks, scales, x, r0, o)),
                    Isa::AvxVnni => super::by_rows!(r, tile_avxvnni(blocks, scales, x, r0, o)),
                    _ => super::by_rows!(r, tile_avx2(blocks, scales, x, r0, o)),
                }
            }
        });
        return;
    }
    #[cfg(target_arch = "aarch64")]
    if isa.vector() {
        row_groups(x.m, ROWS_NEON, out, |r0, r, o| match (isa == Isa::Dotprod, r) {
            (true, 1) => tile_neon::<1, true>(blocks, scales, x, r0, o),
            (true, 2) => tile_neon::<2, true>(blocks, scales, x, r0, o),
            (true, _) => tile_neon::<3, true>(blocks, scales, x, r0, o),
            (false, 1) => tile_neon::<1, false>(blocks, scales, x, r0, o),
            (false, 2) => tile_neon::<2, false>(blocks, scales, x, r0, o),
            (false, _) => tile_neon::<3, false>(blocks, scales, x, r0, o),
        });
        return;
    }
    let _ = isa;
    tile_scalar(blocks, scales, x, out);
}

/// Rows a group of an x86-64 integer product takes for `m` activation rows at level `isa`
/// (at least `Avx2`): [`ROWS`], or on the 256-bit levels [`ROWS_AVX2`] beyond [`ROWS`] rows.
#[cfg(target_arch = "x86_64")]
pub(crate) fn group_rows(isa: Isa, m: usize) -> usize {
    if isa == Isa::Avx512 || m <= ROWS {
        ROWS
    } else {
        ROWS_AVX2
    }
}

/// Run `f(r0, r, out rows)` over the activation rows in groups of at most `rows` (what a kernel
/// keeps in registers), `out` being `[row][16]`.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
pub(crate) fn row_groups(m: usize, rows: usize, out: &mut [f32], mut f: impl FnMut(usize, usize, &mut [f32])) {
    let mut r0 = 0;
    while r0 < m {
        let r = (m - r0).min(rows);
        f(r0, r, &mut out[r0 * TILE..(r0 + r) * TILE]);
        r0 += r;
    }
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
    // Bounds checked once, here: the rows' activation bytes and scales, and `out`'s R rows.
    assert!((r0 + R) * x.k <= x.qs.len() && (r0 + R) * nb <= x.d.len() && R * TILE <= out.len());
    let qs = x.qs.as_ptr();
    let mut acc = [_mm512_setzero_ps(); R];
    for (b, (blk, d)) in blocks.iter().zip(scales).enumerate() {
        let mut sums = [_mm512_setzero_si512(); R];
        for g in 0..BLOCK / 4 {
            // A hint only (never faults): see [`AHEAD`].
            _mm_prefetch::<_MM_HINT_T0>(blk.0.as_ptr().wrapping_add(AHEAD + g * 64) as *const i8);
            // SAFETY: 64 bytes inside the block's `qs` (8 groups × 64 bytes).
            let wv = unsafe { _mm512_loadu_si512(blk.0.as_ptr().add(g * 64) as *const _) };
            for (i, s) in sums.iter_mut().enumerate() {
                // SAFETY: 4 bytes inside row r0 + i's block b (asserted above).
                let a = unsafe { std::ptr::read_unaligned(qs.add((r0 + i) * x.k + b * BLOCK + g * 4) as *const i32) };
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
        // SAFETY: `out` holds R rows of 16 floats (asserted above).
        unsafe { _mm512_storeu_ps(out.as_mut_ptr().add(i * TILE), *a) };
    }
}

/// The 256-bit Q8_0 tiles ([`tile_vnni`] on AVX2 and on AVX-VNNI), one body: `$vnni` picks the
/// integer step. A register holds half the tile (8 outputs): each block takes its two halves in
/// turn, up to 8 rows' integer sums in registers and the rows' f32 accumulators in `out` (L1; in
/// registers too, with 8 rows, they spilled). The weights are read once per row group and
/// fetched [`AHEAD`] bytes before use: the hardware's own prefetch left the product waiting on
/// memory (8 rows, weights streaming: ~35 against ~52 GMAC/s a thread measured on Xeon, AVX2
/// forced; one row ~12 against ~21).
#[cfg(target_arch = "x86_64")]
macro_rules! tile_256 {
    ($(#[$doc:meta])* $name:ident, $features:literal, $vnni:literal) => {
        $(#[$doc])*
        #[target_feature(enable = $features)]
        #[allow(unused_unsafe)]
        fn $name<const R: usize>(blocks: &[TileBlock], scales: &[[half::f16; TILE]], x: &Acts, r0: usize, out: &mut [f32]) {
            use std::arch::x86_64::*;
            let nb = x.k / BLOCK;
            // Bounds checked once, here: the rows' activation bytes and scales, and `out`'s R rows.
            assert!((r0 + R) * x.k <= x.qs.len() && (r0 + R) * nb <= x.d.len() && R * TILE <= out.len());
            out[..R * TILE].fill(0.0);
            let (qs, o) = (x.qs.as_ptr(), out.as_mut_ptr());
            let (flip, ones) = (_mm256_set1_epi8(-128), _mm256_set1_epi16(1));
            // A trip count the compiler cannot see: unrolled whole, the group loop was turned inside
            // out (every group's weights kept live across the rows, spilled to the stack: half the speed).
            let groups = std::hint::black_box(BLOCK / 4);
            for (b, (blk, d)) in blocks.iter().zip(scales).enumerate() {
                for half in 0..2 {
                    let mut sums = [_mm256_setzero_si256(); R];
                    for g in 0..groups.min(BLOCK / 4) {
                        if half == 0 {
                            // A hint only (never faults): the line of the block AHEAD bytes on (the
                            // weight's next tiles follow this one in memory).
                            _mm_prefetch::<_MM_HINT_T0>(blk.0.as_ptr().wrapping_add(AHEAD + g * 64) as *const i8);
                        }
                        // SAFETY: 32 bytes inside the block's `qs` (group g's half).
                        let stored = unsafe { _mm256_load_si256(blk.0.as_ptr().add(g * 64 + half * 32) as *const _) };
                        // (AVX-VNNI takes the stored bytes as they are: `q` and `mag` unused there.)
                        let (q, mag) = if $vnni {
                            (stored, stored)
                        } else {
                            let q = _mm256_xor_si256(stored, flip);
                            (q, _mm256_abs_epi8(q))
                        };
                        for (i, s) in sums.iter_mut().enumerate() {
                            // SAFETY: 4 bytes inside row r0 + i's block b (asserted above).
                            let a = _mm256_set1_epi32(unsafe { std::ptr::read_unaligned(qs.add((r0 + i) * x.k + b * BLOCK + g * 4) as *const i32) });
                            *s = if $vnni {
                                // The stored bytes (q + 128, unsigned) against the activations:
                                // `Σ q · a + 128 · Σ a`, its offset taken off per block below.
                                // SAFETY: reached only in the AVX-VNNI form, whose function
                                // enables the feature (there the block is not needed: the
                                // function allows that).
                                unsafe { _mm256_dpbusd_avx_epi32(*s, stored, a) }
                            } else {
                                // `|q|` times the activation with `q`'s sign (`vpmaddubsw`: pairs,
                                // at most 2 · 127 · 127, no saturation), pairs into i32 (`vpmaddwd`
                                // by ones): `Σ q · a`.
                                _mm256_add_epi32(*s, _mm256_madd_epi16(_mm256_maddubs_epi16(mag, _mm256_sign_epi8(a, q)), ones))
                            };
                        }
                    }
                    // SAFETY: 8 f16 scales (16 bytes) of this half.
                    let dw = unsafe { _mm256_cvtph_ps(_mm_loadu_si128(d.as_ptr().add(half * 8) as *const _)) };
                    for (i, s) in sums.iter().enumerate() {
                        let at = (r0 + i) * nb + b;
                        let scale = _mm256_mul_ps(dw, _mm256_set1_ps(x.d[at]));
                        let s = if $vnni { _mm256_sub_epi32(*s, _mm256_set1_epi32(x.offset[at])) } else { *s };
                        // SAFETY: row i's 8 outputs of this half, inside `out` (asserted above).
                        unsafe {
                            let to = o.add(i * TILE + half * 8);
                            _mm256_storeu_ps(to, _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), scale, _mm256_loadu_ps(to)));
                        }
                    }
                }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
tile_256!(
    /// [`tile_vnni`] on AVX2: per 4-value group, the signed weight bytes `q` (the stored byte with
    /// its offset removed), `|q|` times the activation with `q`'s sign, pairs added into i32:
    /// `Σ q · a`, which is `Σ (q + 128) · a − 128 · Σ a` exactly.
    tile_avx2,
    "avx2,fma,f16c",
    false
);

#[cfg(target_arch = "x86_64")]
tile_256!(
    /// [`tile_vnni`] on AVX-VNNI: one `vpdpbusd` per row and group, as AVX-512 VNNI's, on
    /// 256-bit registers.
    tile_avxvnni,
    "avx2,fma,f16c,avxvnni",
    true
);

/// [`tile_vnni`] on NEON: per 4-value group, the signed weight bytes `q` (the stored byte with
/// its offset removed) against the row's 4 activation bytes, four outputs per register: with
/// `dotprod`, one `sdot` (`Σ q · a` of 4 pairs); without it, widening products (`smull`), pairs
/// added in 16 bits (at most 2 · 127 · 127, no overflow), then into i32 (`sadalp`). Either way
/// `Σ q · a`, which is `Σ (q + 128) · a − 128 · Σ a` exactly.
#[cfg(target_arch = "aarch64")]
fn tile_neon<const R: usize, const DOT: bool>(blocks: &[TileBlock], scales: &[[half::f16; TILE]], x: &Acts, r0: usize, out: &mut [f32]) {
    use std::arch::aarch64::*;
    let nb = x.k / BLOCK;
    // SAFETY: NEON is part of every aarch64 target (`sdot` only where `DOT`, which the level gives
    // only where the CPU has it); every load is inside the block or the row.
    unsafe {
        let flip = vdupq_n_u8(0x80);
        let mut acc = [[vdupq_n_f32(0.0); 4]; R];
        for (b, (blk, d)) in blocks.iter().zip(scales).enumerate() {
            let mut sums = [[vdupq_n_s32(0); 4]; R];
            for g in 0..BLOCK / 4 {
                let q: [int8x16_t; 4] = std::array::from_fn(|c| vreinterpretq_s8_u8(veorq_u8(vld1q_u8(blk.0.as_ptr().add(g * 64 + c * 16)), flip)));
                for (i, s) in sums.iter_mut().enumerate() {
                    let at = (r0 + i) * x.k + b * BLOCK + g * 4;
                    let a = vreinterpretq_s8_s32(vdupq_n_s32(std::ptr::read_unaligned(x.qs.as_ptr().add(at) as *const i32)));
                    for c in 0..4 {
                        s[c] = if DOT {
                            sdot(s[c], q[c], a)
                        } else {
                            let lo = vmull_s8(vget_low_s8(q[c]), vget_low_s8(a));
                            let hi = vmull_high_s8(q[c], a);
                            vpadalq_s16(s[c], vpaddq_s16(lo, hi))
                        };
                    }
                }
            }
            let dw: [f32; TILE] = std::array::from_fn(|c| d[c].to_f32());
            for i in 0..R {
                let da = x.d[(r0 + i) * nb + b];
                for c in 0..4 {
                    let scale = vmulq_f32(vld1q_f32(dw[4 * c..].as_ptr()), vdupq_n_f32(da));
                    acc[i][c] = vfmaq_f32(acc[i][c], vcvtq_f32_s32(sums[i][c]), scale);
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

/// `acc + ` the four 4-byte dot products of `a` and `b` (`sdot`).
#[cfg(target_arch = "aarch64")]
#[target_feature(enable = "dotprod")]
pub(crate) unsafe fn sdot(
    acc: std::arch::aarch64::int32x4_t,
    a: std::arch::aarch64::int8x16_t,
    b: std::arch::aarch64::int8x16_t,
) -> std::arch::aarch64::int32x4_t {
    let mut acc = acc;
    // SAFETY: the caller's CPU has `dotprod`; registers only.
    unsafe { std::arch::asm!("sdot {0:v}.4s, {1:v}.16b, {2:v}.16b", inout(vreg) acc, in(vreg) a, in(vreg) b, options(pure, nomem, nostack)) };
    acc
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

#[cfg(test)]
mod tests {
    use super::super::random;
    use super::*;

    #[test]
    fn inline_rounding_is_round_ties_even() {
        let mut ys: Vec<f32> = (-2540..=2540).map(|i| i as f32 * 0.05).collect();
        ys.extend([0.5, 1.5, 2.5, -0.5, -1.5, 126.5, -126.5, 127.0, 127.49, f32::EPSILON, -0.0, 0.499_999_97]);
        for y in ys {
            assert_eq!(round_even(y), y.round_ties_even(), "{y}");
        }
    }

    #[test]
    fn vector_quantisation_equals_the_scalar_one() {
        let mut x = random(4 * 96, 3);
        // A block whose values fall on half steps (ties, rounded to even by both).
        x[..BLOCK].iter_mut().enumerate().for_each(|(j, v)| *v = if j == 0 { 127.0 } else { j as f32 + 0.5 });
        for isa in Isa::runnable() {
            let a = quantise_rows_on(isa, &x, 4, 96);
            let mut q = [0i8; BLOCK];
            for (b, xb) in x.chunks(BLOCK).enumerate() {
                assert_eq!(quantise_block(xb, &mut q), a.d[b], "{isa:?}");
                assert_eq!(q, a.qs[b * BLOCK..(b + 1) * BLOCK], "{isa:?} block {b}");
                assert_eq!(a.offset[b], 128 * q.iter().map(|&v| v as i32).sum::<i32>());
            }
        }
    }

    #[test]
    fn every_level_equals_the_scalar_reference_bit_for_bit() {
        // A zero block; extreme bytes (±127 weights against ±127 activations: the largest pair sums
        // AVX2 forms).
        super::super::check_packed_product(|w, n, k| (Box::new(PackedQ8::new(w, n, k)), w.to_vec()), 0.0);
        // The scheduler against the product computed tile by tile without it.
        let (w, x) = (random(200 * 576, 1), random(9 * 576, 2));
        let (p, a) = (PackedQ8::new(&w, 200, 576), quantise_rows(&x, 9, 576));
        assert_eq!(matmul_many_on(Isa::Scalar, &[&p as &dyn Packed], &a).pop().unwrap(), matmul_reference(&p, &a));
    }
}
