//! Fused CPU kernels, with their own backward, for the elementwise-heavy pieces of the
//! trainable forward: the attention softmax (with its additive mask), RMSNorm and the gated
//! MLP's `silu(gate) ⊙ up`.
//!
//! Candle's composite versions build each from 5–6 ops, and their backward from about three
//! times as many, every one allocating and filling a full-size tensor (for the attention
//! softmax, heads × seq × seq floats a layer). Each kernel here is one pass forward and one pass
//! backward. Off the CPU, or in another dtype, the composite ops run instead: same math, and
//! what the tests compare against.

use candle_core::{CpuStorage, CustomOp1, CustomOp2, CustomOp3, DType, Layout, Shape, Tensor, D};
use rayon::prelude::*;

use crate::error::Result;

/// A contiguous f32 slice of a custom op's input.
/// `(max(row), ln Σ exp((row − max) / t))`: the sum is accumulated in f64, as generation does, so
/// scored log-probs equal the sampled ones to float rounding.
pub(crate) fn row_lse(row: &[f32], t: f32) -> (f32, f32) {
    let m = row.iter().fold(f32::NEG_INFINITY, |a, &x| a.max(x));
    if !m.is_finite() {
        return (m, 0.0);
    }
    let sum: f64 = row.iter().map(|&x| ((x - m) / t).exp() as f64).sum();
    (m, sum.ln() as f32)
}

pub(crate) fn f32_slice<'a>(storage: &'a CpuStorage, layout: &Layout, op: &str) -> candle_core::Result<&'a [f32]> {
    match layout.contiguous_offsets() {
        Some((a, b)) => Ok(&storage.as_slice::<f32>()?[a..b]),
        None => candle_core::bail!("{op}: inputs must be contiguous"),
    }
}

/// Whether the fused CPU kernels apply to `x` (on the CPU, in f32).
pub(crate) fn fused(x: &Tensor) -> bool {
    x.device().is_cpu() && x.dtype() == DType::F32
}

/// A new tensor of the input's shape, each row (last dimension) written in parallel by
/// `f(row index, input row, output row)`.
fn map_rows(
    storage: &CpuStorage,
    layout: &Layout,
    op: &str,
    f: impl Fn(usize, &[f32], &mut [f32]) + Sync,
) -> candle_core::Result<(CpuStorage, Shape)> {
    let n = layout.shape().dims().last().copied().unwrap_or(1).max(1);
    let x = f32_slice(storage, layout, op)?;
    let mut out = vec![0f32; x.len()];
    out.par_chunks_mut(n).zip(x.par_chunks(n)).enumerate().for_each(|(r, (o, row))| f(r, row, o));
    Ok((CpuStorage::F32(out), layout.shape().clone()))
}

/// [`map_rows`] over two inputs of the same shape: `f(row of the first, row of the second, output row)`.
fn map_rows2(
    (s1, l1): (&CpuStorage, &Layout),
    (s2, l2): (&CpuStorage, &Layout),
    op: &str,
    f: impl Fn(&[f32], &[f32], &mut [f32]) + Sync,
) -> candle_core::Result<(CpuStorage, Shape)> {
    let n = l1.shape().dims().last().copied().unwrap_or(1).max(1);
    let a = f32_slice(s1, l1, op)?;
    let b = f32_slice(s2, l2, op)?;
    let mut out = vec![0f32; a.len()];
    out.par_chunks_mut(n).zip(a.par_chunks(n).zip(b.par_chunks(n))).for_each(|(o, (a, b))| f(a, b, o));
    Ok((CpuStorage::F32(out), l1.shape().clone()))
}

/// `softmax(att + mask)` over the last dimension, differentiable in `att`. `att`:
/// `(b, heads, s, kv)`; `mask`: additive, `(b, 1, s, kv)` (shared by the heads), or none.
pub(crate) fn masked_softmax(att: &Tensor, mask: Option<&Tensor>) -> Result<Tensor> {
    if !fused(att) {
        return composite_masked_softmax(att, mask);
    }
    let att = att.contiguous()?;
    Ok(match mask {
        Some(m) => {
            let (b, _, s, kv) = att.dims4()?;
            if m.dims() != [b, 1, s, kv] {
                return Err(crate::Error::Invalid(format!("mask of shape {:?} for attention {:?}", m.dims(), att.dims())));
            }
            att.apply_op2(&m.contiguous()?, MaskedSoftmax)?
        }
        None => att.apply_op1(Softmax)?,
    })
}

/// [`masked_softmax`] with candle's composite ops.
pub(crate) fn composite_masked_softmax(att: &Tensor, mask: Option<&Tensor>) -> Result<Tensor> {
    let att = match mask {
        Some(m) => att.broadcast_add(m)?,
        None => att.clone(),
    };
    Ok(candle_nn::ops::softmax(&att, D::Minus1)?)
}

/// Softmax of one row into `out` (f32, as candle's composite softmax).
fn softmax_row(x: impl Iterator<Item = f32> + Clone, out: &mut [f32]) {
    let m = x.clone().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0f32;
    for (o, v) in out.iter_mut().zip(x) {
        *o = (v - m).exp();
        sum += *o;
    }
    let inv = 1.0 / sum;
    out.iter_mut().for_each(|o| *o *= inv);
}

struct Softmax;

impl CustomOp1 for Softmax {
    fn name(&self) -> &'static str {
        "spade-softmax"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        map_rows(storage, layout, self.name(), |_, row, o| softmax_row(row.iter().copied(), o))
    }

    fn bwd(&self, _arg: &Tensor, res: &Tensor, grad_res: &Tensor) -> candle_core::Result<Option<Tensor>> {
        Ok(Some(res.apply_op2_no_bwd(&grad_res.contiguous()?, &SoftmaxGrad)?))
    }
}

/// Softmax of `att + mask`, the mask broadcast over the heads.
struct MaskedSoftmax;

impl CustomOp2 for MaskedSoftmax {
    fn name(&self) -> &'static str {
        "spade-masked-softmax"
    }

    fn cpu_fwd(&self, s1: &CpuStorage, l1: &Layout, s2: &CpuStorage, l2: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let (_, h, s, kv) = l1.shape().dims4()?;
        let m = f32_slice(s2, l2, self.name())?;
        map_rows(s1, l1, self.name(), |r, row, o| {
            // Row r is (batch r / (h·s), query r % s); the mask has one row per (batch, query).
            let mrow = (r / (h * s)) * s + r % s;
            let mr = &m[mrow * kv..(mrow + 1) * kv];
            softmax_row(row.iter().zip(mr).map(|(a, b)| a + b), o);
        })
    }

    fn bwd(&self, _a: &Tensor, _m: &Tensor, res: &Tensor, grad_res: &Tensor) -> candle_core::Result<(Option<Tensor>, Option<Tensor>)> {
        Ok((Some(res.apply_op2_no_bwd(&grad_res.contiguous()?, &SoftmaxGrad)?), None))
    }
}

/// Gradient of a softmax through its output `y`, given the output's gradient `g`:
/// `y ⊙ (g − Σ g ⊙ y)` per row.
struct SoftmaxGrad;

impl CustomOp2 for SoftmaxGrad {
    fn name(&self) -> &'static str {
        "spade-softmax-grad"
    }

    fn cpu_fwd(&self, s1: &CpuStorage, l1: &Layout, s2: &CpuStorage, l2: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        map_rows2((s1, l1), (s2, l2), self.name(), |y, g, o| {
            let dot: f32 = y.iter().zip(g).map(|(a, b)| a * b).sum();
            for ((o, &y), &g) in o.iter_mut().zip(y).zip(g) {
                *o = y * (g - dot);
            }
        })
    }
}

/// RMSNorm over the last dimension, `x / sqrt(mean(x²) + eps) ⊙ w`, differentiable in both.
pub(crate) fn rms_norm(x: &Tensor, w: &Tensor, eps: f64) -> Result<Tensor> {
    if !fused(x) {
        return composite_rms_norm(x, w, eps);
    }
    let normed = x.contiguous()?.apply_op1(RmsNormalize { eps: eps as f32 })?;
    Ok(normed.broadcast_mul(w)?)
}

/// [`rms_norm`] with candle's composite ops.
pub(crate) fn composite_rms_norm(x: &Tensor, w: &Tensor, eps: f64) -> Result<Tensor> {
    let ms = x.sqr()?.mean_keepdim(D::Minus1)?;
    Ok(x.broadcast_div(&(ms + eps)?.sqrt()?)?.broadcast_mul(w)?)
}

/// `1 / sqrt(mean(x²) + eps)` of one row.
fn rms_inv(row: &[f32], eps: f32) -> f32 {
    let ms = row.iter().map(|v| v * v).sum::<f32>() / row.len() as f32;
    1.0 / (ms + eps).sqrt()
}

/// `x / sqrt(mean(x²) + eps)` per row (the weight is applied by a plain multiply).
struct RmsNormalize {
    eps: f32,
}

impl CustomOp1 for RmsNormalize {
    fn name(&self) -> &'static str {
        "spade-rms-normalize"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        map_rows(storage, layout, self.name(), |_, row, o| {
            let r = rms_inv(row, self.eps);
            o.iter_mut().zip(row).for_each(|(o, &v)| *o = v * r);
        })
    }

    fn bwd(&self, arg: &Tensor, _res: &Tensor, grad_res: &Tensor) -> candle_core::Result<Option<Tensor>> {
        Ok(Some(arg.apply_op2_no_bwd(&grad_res.contiguous()?, &RmsNormalizeGrad { eps: self.eps })?))
    }
}

/// Gradient of [`RmsNormalize`] given the output's gradient `g`: with `r = 1/sqrt(mean(x²) + eps)`
/// and `n = x·r`, `r · (g − n · mean(g ⊙ n))` per row.
struct RmsNormalizeGrad {
    eps: f32,
}

impl CustomOp2 for RmsNormalizeGrad {
    fn name(&self) -> &'static str {
        "spade-rms-normalize-grad"
    }

    fn cpu_fwd(&self, s1: &CpuStorage, l1: &Layout, s2: &CpuStorage, l2: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        map_rows2((s1, l1), (s2, l2), self.name(), |x, g, o| {
            let r = rms_inv(x, self.eps);
            let dot = x.iter().zip(g).map(|(a, b)| a * r * b).sum::<f32>() / x.len() as f32;
            for ((o, &x), &g) in o.iter_mut().zip(x).zip(g) {
                *o = r * (g - x * r * dot);
            }
        })
    }
}

/// `silu(gate) ⊙ up`, differentiable in both.
pub(crate) fn swiglu(gate: &Tensor, up: &Tensor) -> Result<Tensor> {
    if !fused(gate) {
        return composite_swiglu(gate, up);
    }
    if gate.dims() != up.dims() {
        return Err(crate::Error::Invalid(format!("gate {:?} and up {:?} differ in shape", gate.dims(), up.dims())));
    }
    Ok(gate.contiguous()?.apply_op2(&up.contiguous()?, SwiGlu)?)
}

/// [`swiglu`] with candle's composite ops.
pub(crate) fn composite_swiglu(gate: &Tensor, up: &Tensor) -> Result<Tensor> {
    Ok((gate.silu()? * up)?)
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

struct SwiGlu;

impl CustomOp2 for SwiGlu {
    fn name(&self) -> &'static str {
        "spade-swiglu"
    }

    fn cpu_fwd(&self, s1: &CpuStorage, l1: &Layout, s2: &CpuStorage, l2: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let g = f32_slice(s1, l1, self.name())?;
        let u = f32_slice(s2, l2, self.name())?;
        let mut out = vec![0f32; g.len()];
        const CHUNK: usize = 1 << 14;
        out.par_chunks_mut(CHUNK).zip(g.par_chunks(CHUNK).zip(u.par_chunks(CHUNK))).for_each(|(o, (g, u))| {
            for ((o, &g), &u) in o.iter_mut().zip(g).zip(u) {
                *o = g / (1.0 + (-g).exp()) * u;
            }
        });
        Ok((CpuStorage::F32(out), l1.shape().clone()))
    }

    fn bwd(&self, gate: &Tensor, up: &Tensor, _res: &Tensor, grad_res: &Tensor) -> candle_core::Result<(Option<Tensor>, Option<Tensor>)> {
        let gr = grad_res.contiguous()?;
        let dg = gate.apply_op3_no_bwd(up, &gr, &SwiGluGrad { wrt_gate: true })?;
        let du = gate.apply_op3_no_bwd(up, &gr, &SwiGluGrad { wrt_gate: false })?;
        Ok((Some(dg), Some(du)))
    }
}

/// Gradient of [`SwiGlu`] given the output's gradient `r`: with `σ = sigmoid(gate)`, for the gate
/// `r ⊙ up ⊙ σ ⊙ (1 + gate ⊙ (1 − σ))`, for up `r ⊙ silu(gate)`.
struct SwiGluGrad {
    wrt_gate: bool,
}

impl CustomOp3 for SwiGluGrad {
    fn name(&self) -> &'static str {
        "spade-swiglu-grad"
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        let g = f32_slice(s1, l1, self.name())?;
        let u = f32_slice(s2, l2, self.name())?;
        let r = f32_slice(s3, l3, self.name())?;
        let mut out = vec![0f32; g.len()];
        const CHUNK: usize = 1 << 14;
        let wrt_gate = self.wrt_gate;
        out.par_chunks_mut(CHUNK).zip(g.par_chunks(CHUNK).zip(u.par_chunks(CHUNK)).zip(r.par_chunks(CHUNK))).for_each(|(o, ((g, u), r))| {
            for (((o, &g), &u), &r) in o.iter_mut().zip(g).zip(u).zip(r) {
                let s = sigmoid(g);
                *o = if wrt_gate { r * u * s * (1.0 + g * (1.0 - s)) } else { r * g * s };
            }
        });
        Ok((CpuStorage::F32(out), l1.shape().clone()))
    }
}

/// Fewer rows than this stay on candle's matmul: a BLAS GEMM packs the whole weight on every call,
/// which a single-row decode step cannot amortise (f32 decode at one thread: 9 tokens/s through
/// OpenBLAS, 16 through candle; at batch 8 both gave 55).
const BLAS_MIN_ROWS: usize = 16;

/// `x · wᵀ` for `x` `(rows, in)` and `w` `(out, in)`, differentiable in both: through the system
/// BLAS ([`crate::blas`]) on the CPU in f32 when one is loaded, else candle's matmul.
pub(crate) fn linear(x: &Tensor, w: &Tensor) -> Result<Tensor> {
    if fused(x) && w.dtype() == DType::F32 && x.dim(0)? >= BLAS_MIN_ROWS && crate::blas::blas().is_some() {
        // `Gemm` checks the shapes.
        return Ok(x.contiguous()?.apply_op2(&w.contiguous()?, Linear)?);
    }
    Ok(x.matmul(&w.t()?)?)
}

/// `x · wᵀ` on the BLAS; backward `dx = g · w`, `dw = gᵀ · x`, also on the BLAS.
struct Linear;

impl CustomOp2 for Linear {
    fn name(&self) -> &'static str {
        "spade-linear"
    }

    fn cpu_fwd(&self, s1: &CpuStorage, l1: &Layout, s2: &CpuStorage, l2: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        Gemm { ta: false, tb: true }.cpu_fwd(s1, l1, s2, l2)
    }

    fn bwd(&self, x: &Tensor, w: &Tensor, _res: &Tensor, grad_res: &Tensor) -> candle_core::Result<(Option<Tensor>, Option<Tensor>)> {
        let g = grad_res.contiguous()?;
        // `track_op`: a variable, or computed from one.
        let dx = if x.track_op() { Some(g.apply_op2_no_bwd(w, &Gemm { ta: false, tb: false })?) } else { None };
        let dw = if w.track_op() { Some(g.apply_op2_no_bwd(x, &Gemm { ta: true, tb: false })?) } else { None };
        Ok((dx, dw))
    }
}

/// `op(a) · op(b)` on the BLAS (see [`crate::blas::Blas::sgemm`]), no backward.
struct Gemm {
    ta: bool,
    tb: bool,
}

impl CustomOp2 for Gemm {
    fn name(&self) -> &'static str {
        "spade-gemm"
    }

    fn cpu_fwd(&self, s1: &CpuStorage, l1: &Layout, s2: &CpuStorage, l2: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let Some(blas) = crate::blas::blas() else { candle_core::bail!("spade-gemm: no BLAS loaded") };
        let a = f32_slice(s1, l1, self.name())?;
        let b = f32_slice(s2, l2, self.name())?;
        let (ar, ac) = l1.shape().dims2()?;
        let (br, bc) = l2.shape().dims2()?;
        let (m, k) = if self.ta { (ac, ar) } else { (ar, ac) };
        let (k2, n) = if self.tb { (bc, br) } else { (br, bc) };
        if k != k2 {
            candle_core::bail!("spade-gemm: inner dimensions {k} and {k2} differ");
        }
        let mut c = vec![0f32; m * n];
        blas.sgemm(self.ta, self.tb, m, n, k, a, b, &mut c);
        Ok((CpuStorage::F32(c), Shape::from((m, n))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{Device, Var};

    fn vals(n: usize, k: usize) -> Vec<f32> {
        (0..n).map(|i| ((i * k % 97) as f32 / 97.0 - 0.5) * 6.0).collect()
    }

    fn max_diff(a: &Tensor, b: &Tensor) -> f32 {
        (a - b).unwrap().abs().unwrap().flatten_all().unwrap().max(0).unwrap().to_scalar::<f32>().unwrap()
    }

    /// Value and gradients of `Σ coef ⊙ f(x)` through the fused and the composite ops.
    #[test]
    fn fused_kernels_equal_the_composite_ops() {
        let dev = Device::Cpu;
        let (b, h, s) = (2, 3, 5);
        let coef = Tensor::from_vec(vals(b * h * s * s, 31), (b, h, s, s), &dev).unwrap();
        // A causal mask with one padded key in the second row, and one fully masked query.
        let mut m = vec![0f32; b * s * s];
        for i in 0..b {
            for q in 0..s {
                for k in 0..s {
                    if k > q || (i == 1 && k == 0) {
                        m[(i * s + q) * s + k] = -1e30;
                    }
                }
            }
        }
        let mask = Tensor::from_vec(m, (b, 1, s, s), &dev).unwrap();
        for mask in [Some(&mask), None] {
            let x = Var::from_vec(vals(b * h * s * s, 7919), (b, h, s, s), &dev).unwrap();
            let f = masked_softmax(x.as_tensor(), mask).unwrap();
            let c = composite_masked_softmax(x.as_tensor(), mask).unwrap();
            assert!(max_diff(&f, &c) < 1e-6, "softmax values differ by {}", max_diff(&f, &c));
            let gf = (&f * &coef).unwrap().sum_all().unwrap().backward().unwrap();
            let gc = (&c * &coef).unwrap().sum_all().unwrap().backward().unwrap();
            let (a, bb) = (gf.get(x.as_tensor()).unwrap(), gc.get(x.as_tensor()).unwrap());
            assert!(max_diff(a, bb) < 1e-6, "softmax gradients differ by {}", max_diff(a, bb));
        }
        // RMSNorm, on a non-contiguous input as the q/k norms see it.
        let (rows, d) = (7, 12);
        let x = Var::from_vec(vals(rows * d, 13), (d, rows), &dev).unwrap();
        let w = Var::from_vec(vals(d, 5), d, &dev).unwrap();
        let coef = Tensor::from_vec(vals(rows * d, 29), (rows, d), &dev).unwrap();
        let xt = x.as_tensor().t().unwrap();
        let f = rms_norm(&xt, w.as_tensor(), 1e-5).unwrap();
        let c = composite_rms_norm(&xt, w.as_tensor(), 1e-5).unwrap();
        assert!(max_diff(&f, &c) < 1e-5, "rms-norm values differ by {}", max_diff(&f, &c));
        let gf = (&f * &coef).unwrap().sum_all().unwrap().backward().unwrap();
        let gc = (&c * &coef).unwrap().sum_all().unwrap().backward().unwrap();
        for v in [&x, &w] {
            let (a, bb) = (gf.get(v.as_tensor()).unwrap(), gc.get(v.as_tensor()).unwrap());
            assert!(max_diff(a, bb) < 1e-5, "rms-norm gradients differ by {}", max_diff(a, bb));
            assert!(a.abs().unwrap().flatten_all().unwrap().max(0).unwrap().to_scalar::<f32>().unwrap() > 1e-3);
        }
        // silu(gate) ⊙ up.
        let g = Var::from_vec(vals(rows * d, 17), (rows, d), &dev).unwrap();
        let u = Var::from_vec(vals(rows * d, 23), (rows, d), &dev).unwrap();
        let f = swiglu(g.as_tensor(), u.as_tensor()).unwrap();
        let c = composite_swiglu(g.as_tensor(), u.as_tensor()).unwrap();
        assert!(max_diff(&f, &c) < 1e-6, "swiglu values differ by {}", max_diff(&f, &c));
        let gf = (&f * &coef).unwrap().sum_all().unwrap().backward().unwrap();
        let gc = (&c * &coef).unwrap().sum_all().unwrap().backward().unwrap();
        for v in [&g, &u] {
            let (a, bb) = (gf.get(v.as_tensor()).unwrap(), gc.get(v.as_tensor()).unwrap());
            assert!(max_diff(a, bb) < 1e-5, "swiglu gradients differ by {}", max_diff(a, bb));
        }
        assert!(swiglu(g.as_tensor(), w.as_tensor()).is_err());
        // x · wᵀ (through the BLAS when one loads here; the composite matmul otherwise).
        let n = BLAS_MIN_ROWS + 3;
        let x = Var::from_vec(vals(d * n, 37), (d, n), &dev).unwrap();
        let xt = x.as_tensor().t().unwrap();
        let w2 = Var::from_vec(vals(5 * d, 41), (5, d), &dev).unwrap();
        let coef2 = Tensor::from_vec(vals(n * 5, 43), (n, 5), &dev).unwrap();
        let f = linear(&xt, w2.as_tensor()).unwrap();
        let c = xt.matmul(&w2.as_tensor().t().unwrap()).unwrap();
        assert!(max_diff(&f, &c) < 1e-5, "linear values differ by {}", max_diff(&f, &c));
        let gf = (&f * &coef2).unwrap().sum_all().unwrap().backward().unwrap();
        let gc = (&c * &coef2).unwrap().sum_all().unwrap().backward().unwrap();
        for v in [&x, &w2] {
            let (a, bb) = (gf.get(v.as_tensor()).unwrap(), gc.get(v.as_tensor()).unwrap());
            assert!(max_diff(a, bb) < 1e-5, "linear gradients differ by {}", max_diff(a, bb));
        }
        assert!(linear(&xt, &Tensor::zeros((5, d + 1), DType::F32, &dev).unwrap()).is_err());
        // Where Debian's OpenBLAS is installed (as `make test` installs it), the BLAS path ran.
        if cfg!(target_arch = "x86_64")
            && std::env::var(crate::blas::BLAS_ENV).is_err()
            && std::path::Path::new("/usr/lib/x86_64-linux-gnu/libopenblas.so.0").exists()
        {
            let name = crate::blas::active().expect("OpenBLAS is installed but did not load");
            // ... with the kernels of this CPU's features, not the SSE3 ones it falls back to for a
            // CPU model it does not know (unless the caller named other kernels in OPENBLAS_CORETYPE).
            let named = std::env::var(crate::blas::CORETYPE_ENV).ok();
            if let Some(core) = crate::blas::openblas_coretype().filter(|c| named.as_deref().is_none_or(|n| n == *c)) {
                assert!(name.ends_with(&format!("({core})")), "OpenBLAS runs {name}, this CPU has {core}'s features");
            }
        }
        // A wrong mask shape is an error, not a silent broadcast.
        let x = Tensor::zeros((b, h, s, s), DType::F32, &dev).unwrap();
        let bad = Tensor::zeros((b, h, s, s), DType::F32, &dev).unwrap();
        assert!(masked_softmax(&x, Some(&bad)).is_err());
    }
}
