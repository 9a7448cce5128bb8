//! The decoder blocks' forward and backward written out by hand, on the CPU in f32: what the
//! trainer's blockwise backward ([`crate::score::Checkpointed`]) runs where it can.
//!
//! Candle's autograd gets the same gradients, but every node of its graph costs a zero-filled
//! gradient buffer and an add (`GradStore::or_insert`), every transpose a copy, and a block's
//! backward had to rerun its forward through the graph first. Here a block is a fixed sequence
//! of GEMMs on row-major buffers (strided, so attention heads need no copies) and one pass for
//! each elementwise piece; the backward reads the activations the forward kept. The gradients
//! equal the autograd ones to float rounding (tests in `tests/grpo.rs` compare both, and both
//! against PyTorch).
//!
//! Covers the Llama and Qwen2 layouts (biases included). Qwen3's per-head q/k norms are not
//! written out: such models take candle's autograd path.

use candle_core::{Storage, Tensor};
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::model::{Layer, Lin};

/// `c = alpha · op(a) · op(b) + beta · c`, row-major with leading dimensions: `op(a)` is
/// `(m, k)` (`a` stored `(k, m)` when `ta`), `op(b)` is `(k, n)` (`b` stored `(n, k)` when `tb`),
/// `c` is `(m, n)`. On the system BLAS when one is loaded ([`crate::blas`]), else on the `gemm`
/// crate candle itself uses.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gemm(
    (ta, tb): (bool, bool),
    (m, n, k): (usize, usize, usize),
    alpha: f32,
    (a, lda): (&[f32], usize),
    (b, ldb): (&[f32], usize),
    beta: f32,
    (c, ldc): (&mut [f32], usize),
) {
    if m == 0 || n == 0 {
        return;
    }
    check_bounds((ta, tb), (m, n, k), (a.len(), lda), (b.len(), ldb), (c.len(), ldc));
    match crate::blas::blas() {
        // SAFETY: bounds checked just above.
        Some(blas) => unsafe { blas.sgemm_strided((ta, tb), (m, n, k), alpha, (a, lda), (b, ldb), beta, (c, ldc)) },
        None => gemm_crate((ta, tb), (m, n, k), alpha, (a, lda), (b, ldb), beta, (c, ldc)),
    }
}

/// Panics unless every element a row-major `op(a)` `(m, k)`, `op(b)` `(k, n)` and `c` `(m, n)`
/// reach with these leading dimensions lies inside buffers of these lengths.
pub(crate) fn check_bounds(
    (ta, tb): (bool, bool),
    (m, n, k): (usize, usize, usize),
    (a, lda): (usize, usize),
    (b, ldb): (usize, usize),
    (c, ldc): (usize, usize),
) {
    let need = |rows: usize, cols: usize, ld: usize| if rows == 0 || cols == 0 { 0 } else { (rows - 1) * ld + cols };
    let (ar, ac) = if ta { (k, m) } else { (m, k) };
    let (br, bc) = if tb { (n, k) } else { (k, n) };
    assert!(
        ac <= lda.max(1) && bc <= ldb.max(1) && n <= ldc.max(1) && need(ar, ac, lda) <= a && need(br, bc, ldb) <= b && need(m, n, ldc) <= c,
        "gemm: buffers too small for ({m}, {n}, {k})"
    );
}

/// [`gemm`] on the `gemm` crate.
#[allow(clippy::too_many_arguments)]
fn gemm_crate(
    (ta, tb): (bool, bool),
    (m, n, k): (usize, usize, usize),
    alpha: f32,
    (a, lda): (&[f32], usize),
    (b, ldb): (&[f32], usize),
    beta: f32,
    (c, ldc): (&mut [f32], usize),
) {
    check_bounds((ta, tb), (m, n, k), (a.len(), lda), (b.len(), ldb), (c.len(), ldc));
    if m == 0 || n == 0 {
        return;
    }
    let (a_rs, a_cs) = if ta { (1, lda as isize) } else { (lda as isize, 1) };
    let (b_rs, b_cs) = if tb { (1, ldb as isize) } else { (ldb as isize, 1) };
    let threads = candle_core::utils::get_num_threads();
    let par = if threads > 1 { gemm::Parallelism::Rayon(threads) } else { gemm::Parallelism::None };
    // SAFETY: `check_bounds` bounds every element the strides reach inside the slices;
    // `gemm` computes dst = alpha·dst + beta·lhs·rhs (its alpha and beta are swapped with BLAS's).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            ldc as isize,
            beta != 0.0,
            a.as_ptr(),
            a_cs,
            a_rs,
            b.as_ptr(),
            b_cs,
            b_rs,
            beta,
            alpha,
            false,
            false,
            false,
            par,
        )
    }
}

/// A zero-filled buffer with every page already written. `vec![0.0; n]` gets untouched pages
/// from the kernel: the first read maps the shared zero page, and a write after it (a GEMM that
/// accumulates, `beta = 1`) is a copy-on-write fault that flushes the TLB of every CPU running
/// one of the process's threads — in a VM an inter-processor interrupt per page, which took a
/// quarter of a training step's time. Writing each page first makes it a plain fault.
pub fn zeros(n: usize) -> Vec<f32> {
    let mut v = vec![0f32; n];
    const PAGE: usize = 4096 / std::mem::size_of::<f32>();
    for i in (0..n).step_by(PAGE) {
        // SAFETY: i < n = v.len(); a volatile write is not elided as a store of what calloc gave.
        unsafe { std::ptr::write_volatile(v.as_mut_ptr().add(i), 0.0) };
    }
    v
}

/// The `s × s` attention buffers blocks give back for the next block to reuse: past glibc's
/// largest mapping threshold (32 MiB, ~2,900 positions) every fresh one is mapped, faulted in
/// page by page and zeroed by the kernel, three times a block. At most [`SPARES`] are held.
static SPARE: std::sync::Mutex<Vec<Vec<f32>>> = std::sync::Mutex::new(Vec::new());
const SPARES: usize = 4;

/// A zero-filled buffer of `n` floats: a spare one when one is large enough, else [`zeros`].
fn scratch(n: usize) -> Vec<f32> {
    let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
    let found = spare.iter().position(|v| v.capacity() >= n).map(|i| spare.swap_remove(i));
    drop(spare);
    match found {
        Some(mut v) => {
            v.clear();
            v.resize(n, 0.0);
            v
        }
        None => zeros(n),
    }
}

/// Give `v` back for [`scratch`] (dropped when [`SPARES`] are held; the smallest goes first).
fn give_back(v: Vec<f32>) {
    let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
    spare.push(v);
    if spare.len() > SPARES {
        let smallest = (0..spare.len()).min_by_key(|&i| spare[i].capacity()).unwrap_or(0);
        spare.swap_remove(smallest);
    }
}

/// `f(row index, row)` over the rows of `data` (`width` floats each): on rayon's pool when it
/// has more than one thread and there are enough rows, else in this thread — a parallel call
/// from outside the pool costs tens of µs of wake-ups here, and attention makes thousands of
/// small ones per step.
fn each_row(data: &mut [f32], width: usize, f: impl Fn(usize, &mut [f32]) + Sync + Send) {
    const MIN_ROWS: usize = 64;
    if rayon::current_num_threads() > 1 && data.len() >= 2 * MIN_ROWS * width {
        data.par_chunks_mut(width).with_min_len(MIN_ROWS).enumerate().for_each(|(i, r)| f(i, r));
    } else {
        data.chunks_mut(width).enumerate().for_each(|(i, r)| f(i, r));
    }
}

/// Sizes of one blockwise pass: `b` sequences of `s` positions (right-padded), `n = b · s` rows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dims {
    pub b: usize,
    pub s: usize,
    pub d: usize,
    pub nh: usize,
    pub nkv: usize,
    pub hd: usize,
    pub f: usize,
    pub eps: f32,
}

impl Dims {
    fn n(&self) -> usize {
        self.b * self.s
    }
    fn qd(&self) -> usize {
        self.nh * self.hd
    }
    fn kd(&self) -> usize {
        self.nkv * self.hd
    }
    /// Bytes one block's kept activations take.
    pub fn act_bytes(&self) -> usize {
        let n = self.n();
        4 * n * (4 * self.d + 2 * self.qd() + 2 * self.kd() + 2 * self.f + 2)
    }
}

/// What every block of one pass shares: the rotary tables per row and which keys are real.
pub(crate) struct Shared {
    pub dims: Dims,
    /// `(n, hd / 2)` each.
    cos: Vec<f32>,
    sin: Vec<f32>,
    /// `valid[b][j]`: whether position `j` of sequence `b` is a real token.
    pub valid: Vec<Vec<u8>>,
    /// Several sequences with one prefix, packed in one row ([`Shared::packed`]).
    packing: Option<Packing>,
}

/// One row holding a prefix once and then each sequence's rest, one segment after another: a
/// prefix position sees the prefix causally; a position of segment `k` sees the whole prefix and
/// its own segment causally, never another segment.
struct Packing {
    /// Length of the shared prefix.
    prefix: usize,
    /// For each position, where its segment starts (0 in the prefix).
    start: Vec<usize>,
}

impl Shared {
    /// Positions count the real tokens before each one (as [`crate::model::Model::prepare`]).
    pub fn new(dims: Dims, inv_freq: &[f32], valid: Vec<Vec<u8>>) -> Self {
        let half = dims.hd / 2;
        let mut cos = Vec::with_capacity(dims.n() * half);
        let mut sin = Vec::with_capacity(dims.n() * half);
        for row in &valid {
            let mut p = 0usize;
            for &v in row {
                for &f in inv_freq {
                    let a = p as f32 * f;
                    cos.push(a.cos());
                    sin.push(a.sin());
                }
                p += usize::from(v != 0);
            }
        }
        Shared { dims, cos, sin, valid, packing: None }
    }

    /// One row (`dims.b` = 1) of a shared `prefix` followed by segments of `rests[k]` tokens
    /// (see [`Packing`]): each segment's positions continue from the prefix's, as if it
    /// followed the prefix alone.
    pub fn packed(dims: Dims, inv_freq: &[f32], prefix: usize, rests: &[usize]) -> Self {
        assert!(dims.b == 1 && dims.s == prefix + rests.iter().sum::<usize>(), "packed: dimensions do not match the segments");
        let mut pos: Vec<usize> = (0..prefix).collect();
        let mut start = vec![0; prefix];
        for &n in rests {
            let at = pos.len();
            pos.extend(prefix..prefix + n);
            start.extend(std::iter::repeat_n(at, n));
        }
        let (cos, sin) = pos.iter().flat_map(|&p| inv_freq.iter().map(move |&f| ((p as f32 * f).cos(), (p as f32 * f).sin()))).unzip();
        Shared { dims, cos, sin, valid: vec![vec![1; dims.s]], packing: Some(Packing { prefix, start }) }
    }
}

/// A block's weights as slices (read guards held by [`with_weights`]).
struct W<'a> {
    in_norm: &'a [f32],
    q: &'a [f32],
    k: &'a [f32],
    v: &'a [f32],
    o: &'a [f32],
    q_b: Option<&'a [f32]>,
    k_b: Option<&'a [f32]>,
    v_b: Option<&'a [f32]>,
    o_b: Option<&'a [f32]>,
    post_norm: &'a [f32],
    gate: &'a [f32],
    up: &'a [f32],
    down: &'a [f32],
}

/// The weight tensors of a layer in a fixed order: the four biases (optional) last.
fn layer_tensors(l: &Layer) -> Option<Vec<Option<&Tensor>>> {
    fn dense(x: &Lin) -> Option<&Tensor> {
        match x {
            Lin::Dense(t) => Some(t),
            Lin::Quant(_) | Lin::Packed(_) => None,
        }
    }
    Some(vec![
        Some(&l.in_norm),
        Some(dense(&l.q)?),
        Some(dense(&l.k)?),
        Some(dense(&l.v)?),
        Some(dense(&l.o)?),
        Some(&l.post_norm),
        Some(dense(&l.gate)?),
        Some(dense(&l.up)?),
        Some(dense(&l.down)?),
        l.q_b.as_ref(),
        l.k_b.as_ref(),
        l.v_b.as_ref(),
        l.o_b.as_ref(),
    ])
}

/// Whether a layer can take the written-out path: dense f32 weights on the CPU, no q/k norms.
pub(crate) fn supported(l: &Layer) -> bool {
    l.q_norm.is_none() && l.k_norm.is_none() && layer_tensors(l).is_some_and(|ts| ts.iter().flatten().all(|t| crate::ops::fused(t)))
}

/// The names of a layer's weights (after `model.layers.{i}.`), in [`layer_tensors`]' order.
pub(crate) const LAYER_WEIGHTS: [&str; 13] = [
    "input_layernorm.weight",
    "self_attn.q_proj.weight",
    "self_attn.k_proj.weight",
    "self_attn.v_proj.weight",
    "self_attn.o_proj.weight",
    "post_attention_layernorm.weight",
    "mlp.gate_proj.weight",
    "mlp.up_proj.weight",
    "mlp.down_proj.weight",
    "self_attn.q_proj.bias",
    "self_attn.k_proj.bias",
    "self_attn.v_proj.bias",
    "self_attn.o_proj.bias",
];

/// Gradient buffers of one layer's weights, in [`LAYER_WEIGHTS`]' order; the backward adds
/// into them.
pub(crate) struct LayerGrads<'a>(pub Vec<Option<&'a mut [f32]>>);

impl LayerGrads<'_> {
    fn get(&mut self, i: usize, len: usize) -> Result<&mut [f32]> {
        match self.0.get_mut(i).and_then(|b| b.as_deref_mut()) {
            Some(b) if b.len() == len => Ok(b),
            Some(b) => Err(Error::Invalid(format!("gradient buffer of {} has {} elements, expected {len}", LAYER_WEIGHTS[i], b.len()))),
            None => Err(Error::Invalid(format!("no gradient buffer for {}", LAYER_WEIGHTS[i]))),
        }
    }
}

/// Run `f` with the tensors as contiguous f32 slices of their CPU storage (read guards held
/// meanwhile; None stays None).
pub(crate) fn with_f32<R>(ts: &[Option<&Tensor>], f: impl FnOnce(&[Option<&[f32]>]) -> Result<R>) -> Result<R> {
    let guards: Vec<Option<_>> = ts.iter().map(|t| t.map(|t| t.storage_and_layout())).collect();
    let mut sl: Vec<Option<&[f32]>> = Vec::with_capacity(guards.len());
    for g in &guards {
        sl.push(match g {
            Some((st, layout)) => {
                let (a, b) = layout.contiguous_offsets().ok_or_else(|| Error::Invalid("non-contiguous weight in the blockwise pass".into()))?;
                match &**st {
                    Storage::Cpu(c) => Some(&c.as_slice::<f32>()?[a..b]),
                    _ => return Err(Error::Invalid(format!("weight {:?} not on the CPU", layout.shape()))),
                }
            }
            None => None,
        });
    }
    f(&sl)
}

/// Run `f` with the layer's weights as f32 slices.
fn with_weights<R>(l: &Layer, f: impl FnOnce(&W) -> Result<R>) -> Result<R> {
    let ts = layer_tensors(l).ok_or_else(|| Error::Invalid("quantised layer in the blockwise pass".into()))?;
    with_f32(&ts, |sl| {
        let req = |i: usize| sl[i].expect("required weight");
        f(&W {
            in_norm: req(0),
            q: req(1),
            k: req(2),
            v: req(3),
            o: req(4),
            post_norm: req(5),
            gate: req(6),
            up: req(7),
            down: req(8),
            q_b: sl[9],
            k_b: sl[10],
            v_b: sl[11],
            o_b: sl[12],
        })
    })
}

/// The final norm and the LM head at the rows that predict a needed token, as the head's
/// backward reads them.
pub(crate) struct Head {
    /// Row of the last block's output `(n, d)` that predicts each needed token, and the token.
    rows: Vec<usize>,
    targets: Vec<u32>,
    /// Those rows, their inverse RMS and normalised values `(m, d)`.
    h: Vec<f32>,
    r: Vec<f32>,
    xn: Vec<f32>,
    /// Logits `(m, vocab)`, and per row the maximum and log-sum-exp at temperature `t`.
    z: Vec<f32>,
    stats: Vec<(f32, f32)>,
    t: f32,
}

/// Log-probs at temperature `t` of `targets`, each predicted by row `rows[i]` of the last
/// block's output `x` `(n, d)`: `log softmax(head(norm(x_row)) / t)[target]`.
pub(crate) fn head_forward(
    x: &[f32],
    d: usize,
    (rows, targets): (Vec<usize>, Vec<u32>),
    (norm, head): (&Tensor, &Tensor),
    eps: f32,
    t: f32,
) -> Result<(Vec<f32>, Head)> {
    let m = rows.len();
    with_f32(&[Some(norm), Some(head)], |sl| {
        let (wn, we) = (sl[0].expect("norm"), sl[1].expect("head"));
        let v = we.len() / d;
        let mut h = Vec::with_capacity(m * d);
        for &r in &rows {
            h.extend_from_slice(&x[r * d..(r + 1) * d]);
        }
        let mut xn = zeros(m * d);
        let mut r = zeros(m);
        rms_forward(&h, wn, eps, &mut xn, &mut r);
        let mut z = zeros(m * v);
        gemm((false, true), (m, v, d), 1.0, (&xn, d), (we, d), 0.0, (&mut z, v));
        let stats: Vec<(f32, f32)> = z.par_chunks(v).map(|row| crate::ops::row_lse(row, t)).collect();
        let lp = z.chunks(v).zip(&targets).zip(&stats).map(|((row, &k), &(mx, lse))| (row[k as usize] - mx) / t - lse).collect();
        Ok((lp, Head { rows, targets, h, r, xn, z, stats, t }))
    })
}

/// Backward of [`head_forward`] for `Σ coef ⊙ log-probs`: adds the norm's and the head's weight
/// gradients into `d_norm` and `d_head`, and each row's input gradient into `dx` `(n, d)`.
pub(crate) fn head_backward(
    hd: Head,
    d: usize,
    coef: &[f32],
    (norm, head): (&Tensor, &Tensor),
    d_norm: &mut [f32],
    d_head: &mut [f32],
    dx: &mut [f32],
) -> Result<()> {
    let Head { rows, targets, h, r, xn, mut z, stats, t } = hd;
    let m = rows.len();
    with_f32(&[Some(norm), Some(head)], |sl| {
        let (wn, we) = (sl[0].expect("norm"), sl[1].expect("head"));
        let v = we.len() / d;
        // dz = coef / t · (onehot(target) − softmax(z / t)), in place of the logits.
        z.par_chunks_mut(v).zip(targets.par_iter()).zip(stats.par_iter().zip(coef.par_iter())).for_each(|((row, &k), (&(mx, lse), &c))| {
            let c = c / t;
            if c == 0.0 {
                row.iter_mut().for_each(|x| *x = 0.0);
                return;
            }
            for x in row.iter_mut() {
                *x = -c * ((*x - mx) / t - lse).exp();
            }
            row[k as usize] += c;
        });
        gemm((true, false), (v, d, m), 1.0, (&z, v), (&xn, d), 1.0, (d_head, d));
        let mut dxn = zeros(m * d);
        gemm((false, false), (m, d, v), 1.0, (&z, v), (we, d), 0.0, (&mut dxn, d));
        drop(z);
        let mut dh = zeros(m * d);
        rms_backward(&h, &r, wn, &dxn, &mut dh, d_norm);
        for (&row, g) in rows.iter().zip(dh.chunks(d)) {
            dx[row * d..(row + 1) * d].iter_mut().zip(g).for_each(|(a, b)| *a += b);
        }
        Ok(())
    })
}

/// What a block's backward reads from its forward.
pub(crate) struct Acts {
    h1: Vec<f32>,
    r1: Vec<f32>,
    /// After the bias and the rotary embedding.
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    y: Vec<f32>,
    x2: Vec<f32>,
    r2: Vec<f32>,
    h2: Vec<f32>,
    g: Vec<f32>,
    u: Vec<f32>,
}

/// RMSNorm of each row of `x` (rows of `w.len()`): `out = x · r · w`, `r = 1 / rms(x)` saved.
pub(crate) fn rms_forward(x: &[f32], w: &[f32], eps: f32, out: &mut [f32], r: &mut [f32]) {
    let d = w.len();
    out.par_chunks_mut(d).zip(x.par_chunks(d)).zip(r.par_iter_mut()).for_each(|((o, x), r)| {
        let ms = x.iter().map(|&v| (v as f64) * (v as f64)).sum::<f64>() / d as f64;
        let inv = 1.0 / ((ms + eps as f64).sqrt());
        *r = inv as f32;
        for ((o, &x), &w) in o.iter_mut().zip(x).zip(w) {
            *o = x * *r * w;
        }
    });
}

/// Backward of [`rms_forward`]: adds the input's gradient into `dx`, and the weight's into `dw`.
pub(crate) fn rms_backward(x: &[f32], r: &[f32], w: &[f32], dy: &[f32], dx: &mut [f32], dw: &mut [f32]) {
    let d = w.len();
    dx.par_chunks_mut(d).zip(x.par_chunks(d)).zip(dy.par_chunks(d)).zip(r.par_iter()).for_each(|(((dx, x), dy), &r)| {
        // xn = x·r; dxn = dy·w; dx = r · (dxn − xn · mean(dxn · xn))
        let dot: f64 = x.iter().zip(dy).zip(w).map(|((&x, &g), &w)| (x * r) as f64 * (g * w) as f64).sum::<f64>() / d as f64;
        let dot = dot as f32;
        for (((o, &x), &g), &w) in dx.iter_mut().zip(x).zip(dy).zip(w) {
            *o += r * (g * w - x * r * dot);
        }
    });
    for (x, (dy, &r)) in x.chunks(d).zip(dy.chunks(d).zip(r)) {
        for ((a, &x), &g) in dw.iter_mut().zip(x).zip(dy) {
            *a += g * x * r;
        }
    }
}

/// `y = x · Wᵀ (+ bias)`: `x` `(n, in)`, `w` `(out, in)`.
pub(crate) fn linear(x: &[f32], w: &[f32], bias: Option<&[f32]>, n: usize, inp: usize, out: usize) -> Vec<f32> {
    let mut y = zeros(n * out);
    gemm((false, true), (n, out, inp), 1.0, (x, inp), (w, inp), 0.0, (&mut y, out));
    if let Some(b) = bias {
        y.par_chunks_mut(out).for_each(|row| row.iter_mut().zip(b).for_each(|(y, b)| *y += b));
    }
    y
}

/// Backward of [`linear`] for the weight, added into `dw`: `dw += dyᵀ · x`.
fn linear_grads(dy: &[f32], x: &[f32], (n, inp, out): (usize, usize, usize), dw: &mut [f32]) {
    gemm((true, false), (out, inp, n), 1.0, (dy, out), (x, inp), 1.0, (dw, inp));
}

/// Backward of [`linear`]'s bias, added into `db`: the column sums of `dy`.
fn bias_grads(dy: &[f32], db: &mut [f32]) {
    for row in dy.chunks(db.len()) {
        db.iter_mut().zip(row).for_each(|(a, b)| *a += b);
    }
}

/// Rotate every head of every row in place (rotate-half layout); `inverse` applies the
/// transpose, which is the backward.
fn rope(x: &mut [f32], heads: usize, sh: &Shared, inverse: bool) {
    let hd = sh.dims.hd;
    let half = hd / 2;
    let sign = if inverse { -1.0 } else { 1.0 };
    x.par_chunks_mut(heads * hd).enumerate().for_each(|(row, xr)| {
        let cos = &sh.cos[row * half..(row + 1) * half];
        let sin = &sh.sin[row * half..(row + 1) * half];
        for h in xr.chunks_mut(hd) {
            let (a, b) = h.split_at_mut(half);
            for j in 0..half {
                let (x1, x2) = (a[j], b[j]);
                let s = sign * sin[j];
                a[j] = x1 * cos[j] - x2 * s;
                b[j] = x2 * cos[j] + x1 * s;
            }
        }
    });
}

/// Query rows per attention GEMM: with causal attention, a block of rows needs only the keys
/// up to its last row, so the score, value and gradient GEMMs skip the masked upper part
/// (~3/8 of the work at 512 positions).
const ROW_BLOCK: usize = 128;

/// The number of real tokens when they are exactly a prefix of the sequence (right padding, as
/// the trainer pads), else None.
fn prefix_len(valid: &[u8]) -> Option<usize> {
    let len = valid.iter().take_while(|&&v| v != 0).count();
    valid[len..].iter().all(|&v| v == 0).then_some(len)
}

/// The attention of one sequence, split in blocks of query rows `(r0, r1, keys)`: the rows'
/// scores are needed for keys `0..keys` only (the rest is masked). Without a real-token prefix
/// every key is kept (exactly the additive mask's semantics, fully masked rows included).
fn row_blocks(s: usize, valid: &[u8]) -> Vec<(usize, usize, usize)> {
    match prefix_len(valid) {
        Some(len) if len > 0 => (0..s).step_by(ROW_BLOCK).map(|r0| (r0, (r0 + ROW_BLOCK).min(s), (r0 + ROW_BLOCK).min(s).min(len))).collect(),
        _ => vec![(0, s, s)],
    }
}

/// Masked softmax, in place, of rows `r0..r1` of one sequence's `(s, s)` scores, of which
/// columns `0..keys` were computed: key `j` is seen by query `i` when `j ≤ i` and it is a real
/// token; the other entries become 0; a row that sees nothing is uniform (as the additive −1e30
/// mask gives).
fn softmax_rows(p: &mut [f32], s: usize, (r0, r1, keys): (usize, usize, usize), valid: &[u8], packing: Option<&Packing>) {
    let prefix = prefix_len(valid);
    each_row(&mut p[r0 * s..r1 * s], s, |k, row| {
        let i = r0 + k;
        if let Some(pk) = packing.filter(|pk| pk.start[i] > 0) {
            // A segment's row sees the prefix and its own segment up to itself: those keys are
            // moved next to each other, normalised, moved back, and the others zeroed.
            let (p0, st) = (pk.prefix, pk.start[i]);
            let own = i + 1 - st;
            debug_assert!(i < keys);
            row.copy_within(st..=i, p0);
            softmax_in_place(&mut row[..p0 + own]);
            row.copy_within(p0..p0 + own, st);
            row[p0..st].fill(0.0);
            row[i + 1..].fill(0.0);
            return;
        }
        if let Some(len) = prefix {
            // The seen keys are 0..lim: one contiguous run.
            let lim = (i + 1).min(len);
            if lim > 0 {
                debug_assert!(lim <= keys);
                let (seen, rest) = row.split_at_mut(lim);
                softmax_in_place(seen);
                rest.fill(0.0);
                return;
            }
        }
        let seen = |j: usize| j <= i && valid[j] != 0;
        let m = (0..s).filter(|&j| seen(j)).map(|j| row[j]).fold(f32::NEG_INFINITY, f32::max);
        if m == f32::NEG_INFINITY {
            row.iter_mut().for_each(|x| *x = 1.0 / s as f32);
            return;
        }
        let mut sum = 0f32;
        for (j, x) in row.iter_mut().enumerate() {
            *x = if seen(j) { (*x - m).exp() } else { 0.0 };
            sum += *x;
        }
        let inv = 1.0 / sum;
        row.iter_mut().for_each(|x| *x *= inv);
    });
}

/// `exp(x)` for `−87 ≤ x ≤ 0` to ~1e-7 relative (below, exp(−87)) (Cephes' `expf`: `x = n·ln 2 + r`, a degree-6
/// polynomial in `r`, `2ⁿ` from the exponent bits), written to vectorise.
#[inline(always)]
fn exp_neg(x: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0; // 1.5 · 2²³: adding it rounds to an integer
    let x = if x < -87.0 { -87.0 } else { x };
    let t = x * std::f32::consts::LOG2_E + MAGIC;
    let n = t - MAGIC;
    let r = x - n * 0.693_359_4 + n * 2.121_944_4e-4;
    let p = ((((1.987_569_1e-4 * r + 1.398_199_9e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r + 1.666_666_5e-1) * r + 0.5;
    let e = p * r * r + r + 1.0;
    let bits = (t.to_bits() as i32 - 0x4B40_0000 + 127) << 23;
    e * f32::from_bits(bits as u32)
}

/// Softmax of a whole slice in place (8 lanes, so it vectorises).
#[inline(always)]
fn softmax_lanes(row: &mut [f32]) {
    let mut mx = [f32::NEG_INFINITY; 8];
    let mut chunks = row.chunks_exact(8);
    for c in &mut chunks {
        for l in 0..8 {
            mx[l] = if c[l] > mx[l] { c[l] } else { mx[l] };
        }
    }
    let m = chunks.remainder().iter().chain(&mx).fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    let mut acc = [0f32; 8];
    let mut chunks = row.chunks_exact_mut(8);
    for c in &mut chunks {
        for l in 0..8 {
            c[l] = exp_neg(c[l] - m);
            acc[l] += c[l];
        }
    }
    let mut sum = 0f32;
    for x in chunks.into_remainder() {
        *x = exp_neg(*x - m);
        sum += *x;
    }
    let inv = 1.0 / (sum + acc.iter().sum::<f32>());
    row.iter_mut().for_each(|x| *x *= inv);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn softmax_avx2(row: &mut [f32]) {
    softmax_lanes(row)
}

/// [`softmax_lanes`] on AVX2 where the CPU has it (the build targets baseline x86-64). No FMA
/// contraction either way, so the numbers do not depend on the CPU.
pub(crate) fn softmax_in_place(row: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if crate::kernels::isa() >= crate::kernels::Isa::Avx2 {
        // SAFETY: the level is only AVX2 where the CPU has it.
        return unsafe { softmax_avx2(row) };
    }
    softmax_lanes(row)
}

/// The attention probabilities of one head over the row block `(r0, r1, keys)` of one sequence,
/// into rows `r0..r1` of `pm` `(s, s)`: scaled scores of the rotated queries `q` (at offset
/// `qo`) against the rotated keys `k` (at `ko`), then [`softmax_rows`]. The forward and the
/// backward both call it, so the backward recomputes exactly the forward's numbers instead of
/// keeping `nh · s²` floats a block.
fn probabilities(pm: &mut [f32], (q, qo): (&[f32], usize), (k, ko): (&[f32], usize), sh: &Shared, bi: usize, rb: (usize, usize, usize)) {
    let dm = &sh.dims;
    let (s, hd, qd, kd) = (dm.s, dm.hd, dm.qd(), dm.kd());
    let (r0, r1, keys) = rb;
    let scale = 1.0 / (hd as f32).sqrt();
    gemm((false, true), (r1 - r0, keys, hd), scale, (&q[qo + r0 * qd..], qd), (&k[ko..], kd), 0.0, (&mut pm[r0 * s..], s));
    softmax_rows(pm, s, rb, &sh.valid[bi], sh.packing.as_ref());
}

/// One block forward over `x` `(n, d)`: its output, and (`keep`) the activations its backward
/// reads.
pub(crate) fn forward(layer: &Layer, sh: &Shared, x: &[f32], keep: bool) -> Result<(Vec<f32>, Option<Acts>)> {
    let dm = sh.dims;
    let (n, d, s, hd) = (dm.n(), dm.d, dm.s, dm.hd);
    let (qd, kd, f) = (dm.qd(), dm.kd(), dm.f);
    let g = dm.nh / dm.nkv;
    with_weights(layer, |w| {
        let mut h1 = zeros(n * d);
        let mut r1 = zeros(n);
        rms_forward(x, w.in_norm, dm.eps, &mut h1, &mut r1);
        let mut q = linear(&h1, w.q, w.q_b, n, d, qd);
        let mut k = linear(&h1, w.k, w.k_b, n, d, kd);
        let v = linear(&h1, w.v, w.v_b, n, d, kd);
        rope(&mut q, dm.nh, sh, false);
        rope(&mut k, dm.nkv, sh, false);
        let blocks: Vec<_> = sh.valid.iter().map(|v| row_blocks(s, v)).collect();
        let mut y = zeros(n * qd);
        let mut pm = scratch(s * s);
        for (bi, rows_of) in blocks.iter().enumerate() {
            for h in 0..dm.nh {
                let (qo, ko) = (bi * s * qd + h * hd, bi * s * kd + (h / g) * hd);
                for &rb in rows_of {
                    let (r0, r1, keys) = rb;
                    probabilities(&mut pm, (&q, qo), (&k, ko), sh, bi, rb);
                    let (ro, rq) = (r0 * s, qo + r0 * qd);
                    gemm((false, false), (r1 - r0, hd, keys), 1.0, (&pm[ro..], s), (&v[ko..], kd), 0.0, (&mut y[rq..], qd));
                }
            }
        }
        give_back(pm);
        let o = linear(&y, w.o, w.o_b, n, qd, d);
        let x2: Vec<f32> = x.iter().zip(&o).map(|(a, b)| a + b).collect();
        drop(o);
        let mut h2 = zeros(n * d);
        let mut r2 = zeros(n);
        rms_forward(&x2, w.post_norm, dm.eps, &mut h2, &mut r2);
        let gt = linear(&h2, w.gate, None, n, d, f);
        let u = linear(&h2, w.up, None, n, d, f);
        let a = swiglu(&gt, &u);
        let mut out = linear(&a, w.down, None, n, f, d);
        drop(a);
        out.par_iter_mut().zip(x2.par_iter()).for_each(|(o, x)| *o += x);
        let acts = keep.then_some(Acts { h1, r1, q, k, v, y, x2, r2, h2, g: gt, u });
        Ok((out, acts))
    })
}

fn silu(x: f32) -> f32 {
    x / (1.0 + (-x).exp())
}

pub(crate) fn swiglu(g: &[f32], u: &[f32]) -> Vec<f32> {
    g.par_iter().zip(u.par_iter()).map(|(&g, &u)| silu(g) * u).collect()
}

/// One block backward: the gradient of its input given its output's `dout`; its weights'
/// gradients are added into `acc`.
pub(crate) fn backward(layer: &Layer, sh: &Shared, x: &[f32], a: &Acts, dout: &[f32], acc: &mut LayerGrads) -> Result<Vec<f32>> {
    let dm = sh.dims;
    let (n, d, s, hd) = (dm.n(), dm.d, dm.s, dm.hd);
    let (qd, kd, f) = (dm.qd(), dm.kd(), dm.f);
    let g = dm.nh / dm.nkv;
    let scale = 1.0 / (hd as f32).sqrt();
    with_weights(layer, |w| {
        // MLP: out = x2 + down(silu(gate(h2)) ⊙ up(h2)).
        let act = swiglu(&a.g, &a.u);
        linear_grads(dout, &act, (n, f, d), acc.get(8, d * f)?);
        drop(act);
        let mut da = zeros(n * f);
        gemm((false, false), (n, f, d), 1.0, (dout, d), (w.down, f), 0.0, (&mut da, f));
        // da → d(gate) in place; du is new.
        let mut du = zeros(n * f);
        da.par_iter_mut().zip(du.par_iter_mut()).zip(a.g.par_iter().zip(a.u.par_iter())).for_each(|((dg, du), (&gv, &uv))| {
            let sg = 1.0 / (1.0 + (-gv).exp());
            *du = *dg * gv * sg;
            *dg *= uv * sg * (1.0 + gv * (1.0 - sg));
        });
        linear_grads(&da, &a.h2, (n, d, f), acc.get(6, f * d)?);
        linear_grads(&du, &a.h2, (n, d, f), acc.get(7, f * d)?);
        let mut dh2 = zeros(n * d);
        gemm((false, false), (n, d, f), 1.0, (&da, f), (w.gate, d), 0.0, (&mut dh2, d));
        gemm((false, false), (n, d, f), 1.0, (&du, f), (w.up, d), 1.0, (&mut dh2, d));
        drop((da, du));
        let mut dx2 = dout.to_vec();
        rms_backward(&a.x2, &a.r2, w.post_norm, &dh2, &mut dx2, acc.get(5, d)?);
        drop(dh2);
        // Attention: x2 = x + o(attn(rope(q(h1)), rope(k(h1)), v(h1))).
        linear_grads(&dx2, &a.y, (n, qd, d), acc.get(4, d * qd)?);
        if w.o_b.is_some() {
            bias_grads(&dx2, acc.get(12, d)?);
        }
        let mut dy = zeros(n * qd);
        gemm((false, false), (n, qd, d), 1.0, (&dx2, d), (w.o, qd), 0.0, (&mut dy, qd));
        let mut dq = zeros(n * qd);
        let mut dk = zeros(n * kd);
        let mut dv = zeros(n * kd);
        let mut dp = scratch(s * s);
        let mut pm = scratch(s * s);
        let blocks: Vec<_> = sh.valid.iter().map(|v| row_blocks(s, v)).collect();
        for (bi, rows_of) in blocks.iter().enumerate() {
            for h in 0..dm.nh {
                let (qo, ko) = (bi * s * qd + h * hd, bi * s * kd + (h / g) * hd);
                for &rb in rows_of {
                    let (r0, r1, keys) = rb;
                    // The forward's probabilities again, by the same operations: bit for bit.
                    probabilities(&mut pm, (&a.q, qo), (&a.k, ko), sh, bi, rb);
                    let (ro, rq, rows) = (r0 * s, qo + r0 * qd, r1 - r0);
                    let dpb = &mut dp[ro..r1 * s];
                    gemm((false, true), (rows, keys, hd), 1.0, (&dy[rq..], qd), (&a.v[ko..], kd), 0.0, (dpb, s));
                    gemm((true, false), (keys, hd, rows), 1.0, (&pm[ro..], s), (&dy[rq..], qd), 1.0, (&mut dv[ko..], kd));
                    // dS = P ⊙ (dP − rowsum(dP ⊙ P)) over the computed keys (P is 0 beyond).
                    each_row(dpb, s, |k, dr| {
                        let pr = &pm[ro + k * s..][..keys];
                        let dr = &mut dr[..keys];
                        let dot: f32 = dr.iter().zip(pr).map(|(a, b)| a * b).sum();
                        dr.iter_mut().zip(pr).for_each(|(x, &p)| *x = p * (*x - dot));
                    });
                    gemm((false, false), (rows, hd, keys), scale, (&dp[ro..], s), (&a.k[ko..], kd), 0.0, (&mut dq[rq..], qd));
                    gemm((true, false), (keys, hd, rows), scale, (&dp[ro..], s), (&a.q[rq..], qd), 1.0, (&mut dk[ko..], kd));
                }
            }
        }
        drop(dy);
        give_back(dp);
        give_back(pm);
        rope(&mut dq, dm.nh, sh, true);
        rope(&mut dk, dm.nkv, sh, true);
        linear_grads(&dq, &a.h1, (n, d, qd), acc.get(1, qd * d)?);
        linear_grads(&dk, &a.h1, (n, d, kd), acc.get(2, kd * d)?);
        linear_grads(&dv, &a.h1, (n, d, kd), acc.get(3, kd * d)?);
        for (i, dt, present) in [(9, &dq, w.q_b.is_some()), (10, &dk, w.k_b.is_some()), (11, &dv, w.v_b.is_some())] {
            if present {
                let len = dt.len() / n;
                bias_grads(dt, acc.get(i, len)?);
            }
        }
        let mut dh1 = zeros(n * d);
        gemm((false, false), (n, d, qd), 1.0, (&dq, qd), (w.q, d), 0.0, (&mut dh1, d));
        gemm((false, false), (n, d, kd), 1.0, (&dk, kd), (w.k, d), 1.0, (&mut dh1, d));
        gemm((false, false), (n, d, kd), 1.0, (&dv, kd), (w.v, d), 1.0, (&mut dh1, d));
        drop((dq, dk, dv));
        let mut dx = dx2;
        rms_backward(x, &a.r1, w.in_norm, &dh1, &mut dx, acc.get(0, d)?);
        Ok(dx)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectorised_exp_and_softmax_match_the_plain_ones() {
        for k in 0..=2000 {
            let x = -(k as f32) * 0.05;
            let (a, b) = (exp_neg(x), x.exp());
            // Below −87 the result stays at exp(−87) ≈ 1.6e-38.
            assert!((a - b).abs() <= 2e-7 * b + 2e-38, "exp({x}): {a} vs {b}");
        }
        for n in [1usize, 7, 8, 19, 300] {
            let row: Vec<f32> = (0..n).map(|j| ((j * 7919 % 97) as f32 - 40.0) / 9.0).collect();
            let m = row.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
            let sum: f64 = row.iter().map(|&x| ((x - m) as f64).exp()).sum();
            let mut got = row.clone();
            softmax_in_place(&mut got);
            for (g, &x) in got.iter().zip(&row) {
                let want = ((x - m) as f64).exp() / sum;
                assert!((*g as f64 - want).abs() <= 1e-6 * want + 1e-9, "n={n}: {g} vs {want}");
            }
        }
    }

    /// Both GEMMs (the BLAS when loaded, and the `gemm` crate) against a plain triple loop, for
    /// every transposition, with leading dimensions wider than the matrices and beta 0 and 1.
    #[test]
    fn strided_gemm_matches_a_plain_loop() {
        let (m, n, k) = (5, 7, 3);
        let val = |i: usize| ((i * 7919 % 23) as f32 - 11.0) / 5.0;
        for (ta, tb) in [(false, false), (false, true), (true, false), (true, true)] {
            let (ar, ac) = if ta { (k, m) } else { (m, k) };
            let (br, bc) = if tb { (n, k) } else { (k, n) };
            let (lda, ldb, ldc) = (ac + 2, bc + 1, n + 3);
            let a: Vec<f32> = (0..ar * lda).map(val).collect();
            let b: Vec<f32> = (0..br * ldb).map(|i| val(i + 5)).collect();
            let at = |i: usize, p: usize| if ta { a[p * lda + i] } else { a[i * lda + p] };
            let bt = |p: usize, j: usize| if tb { b[j * ldb + p] } else { b[p * ldb + j] };
            for beta in [0.0f32, 1.0] {
                let c0: Vec<f32> = (0..m * ldc).map(|i| val(i + 9)).collect();
                let mut want = c0.clone();
                for i in 0..m {
                    for j in 0..n {
                        let dot: f32 = (0..k).map(|p| at(i, p) * bt(p, j)).sum();
                        want[i * ldc + j] = 0.5 * dot + beta * c0[i * ldc + j];
                    }
                }
                let mut runs: Vec<Vec<f32>> = Vec::new();
                let mut c = c0.clone();
                gemm_crate((ta, tb), (m, n, k), 0.5, (&a, lda), (&b, ldb), beta, (&mut c, ldc));
                runs.push(c);
                let mut c = c0.clone();
                gemm((ta, tb), (m, n, k), 0.5, (&a, lda), (&b, ldb), beta, (&mut c, ldc));
                runs.push(c);
                for got in runs {
                    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                        assert!((g - w).abs() < 1e-5, "ta={ta} tb={tb} beta={beta} [{i}]: {g} vs {w}");
                    }
                }
            }
        }
    }

    #[test]
    fn row_blocks_cover_the_causal_keys() {
        assert_eq!(row_blocks(300, &[1; 300]), vec![(0, 128, 128), (128, 256, 256), (256, 300, 300)]);
        let mut v = vec![1u8; 170];
        v.extend([0; 130]);
        assert_eq!(row_blocks(300, &v), vec![(0, 128, 128), (128, 256, 170), (256, 300, 170)]);
        // Left padding: not a prefix, every key.
        assert_eq!(row_blocks(4, &[0, 1, 1, 1]), vec![(0, 4, 4)]);
        // No real token: every key (the rows are uniform, as the additive mask makes them).
        assert_eq!(row_blocks(4, &[0; 4]), vec![(0, 4, 4)]);
    }
}
