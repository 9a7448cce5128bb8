//! AdamW in place over the f32 buffers, with global gradient-norm clipping — PyTorch's update
//! (decoupled decay `p ← p·(1 − lr·wd)`, then `p ← p − lr/bc1 · m / (sqrt(v)/sqrt(bc2) + ε)`),
//! fused into one pass over each tensor and spread over threads in fixed chunks, so the result is
//! the same whatever the thread count. No allocation per step: the moments live in `Vec<f32>`s
//! and the weights are written through candle's in-place op API.

use std::cell::RefCell;
use std::collections::BTreeMap;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use spade_model::candle_core::{self as candle, CpuStorage, InplaceOp1, Layout, Tensor, Var};

/// Elements per parallel chunk (fixed, so reductions are deterministic).
const CHUNK: usize = 1 << 15;

/// AdamW hyper-parameters (defaults: the reference's).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct AdamW {
    pub lr: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    pub weight_decay: f64,
    /// Max global gradient norm (0: no clipping).
    pub max_grad_norm: f64,
}

impl Default for AdamW {
    fn default() -> Self {
        AdamW { lr: 1e-6, beta1: 0.9, beta2: 0.98, eps: 1e-8, weight_decay: 0.1, max_grad_norm: 1.0 }
    }
}

/// The optimizer's state: first and second moments per parameter, and the update count.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// Updates applied so far (bias correction uses `step + 1` for the next one).
    pub step: u64,
    pub exp_avg: BTreeMap<String, Vec<f32>>,
    pub exp_avg_sq: BTreeMap<String, Vec<f32>>,
}

impl State {
    /// Zero moments for these parameters.
    pub fn zeros(vars: &BTreeMap<String, Var>) -> Self {
        let mut s = State::default();
        for (k, v) in vars {
            s.exp_avg.insert(k.clone(), spade_model::zeros(v.elem_count()));
            s.exp_avg_sq.insert(k.clone(), spade_model::zeros(v.elem_count()));
        }
        s
    }
}

/// Global L2 norm of the gradients (f64 sums in a fixed order).
pub fn global_norm(grads: &BTreeMap<String, Vec<f32>>) -> f64 {
    let mut total = 0.0f64;
    for g in grads.values() {
        let parts: Vec<f64> = g.par_chunks(CHUNK).map(|c| c.iter().map(|&x| (x as f64) * (x as f64)).sum::<f64>()).collect();
        total += parts.iter().sum::<f64>();
    }
    total.sqrt()
}

/// PyTorch's `clip_grad_norm_` factor: `min(1, max_norm / (norm + 1e-6))`.
pub fn clip_factor(norm: f64, max_norm: f64) -> f64 {
    if max_norm <= 0.0 {
        return 1.0;
    }
    (max_norm / (norm + 1e-6)).min(1.0)
}

/// Learning-rate schedule over a run's updates: linear warm-up from 0, then constant, linear
/// decay to 0, or half-cosine decay to 0 (the shapes of `transformers`' `get_*_schedule_with_warmup`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Schedule {
    Constant,
    Linear,
    #[default]
    Cosine,
}

impl Schedule {
    /// Learning rate of update `step` (0-based) of `total`, the first `warmup` of them warming up.
    pub fn lr(self, base: f64, step: usize, total: usize, warmup: usize) -> f64 {
        if step < warmup {
            return base * (step + 1) as f64 / (warmup + 1) as f64;
        }
        let span = total.saturating_sub(warmup).max(1) as f64;
        let done = ((step - warmup) as f64 / span).clamp(0.0, 1.0);
        match self {
            Schedule::Constant => base,
            Schedule::Linear => base * (1.0 - done),
            Schedule::Cosine => base * 0.5 * (1.0 + (std::f64::consts::PI * done).cos()),
        }
    }
}

#[derive(Clone, Copy)]
struct Consts {
    decay: f32,
    b1: f32,
    b2: f32,
    one_b1: f32,
    one_b2: f32,
    step_size: f32,
    bc2_sqrt: f32,
    eps: f32,
    gscale: f32,
}

impl Consts {
    fn new(h: &AdamW, step: u64, gscale: f64) -> Self {
        let bc1 = 1.0 - h.beta1.powi(step as i32);
        let bc2 = 1.0 - h.beta2.powi(step as i32);
        Consts {
            decay: (1.0 - h.lr * h.weight_decay) as f32,
            b1: h.beta1 as f32,
            b2: h.beta2 as f32,
            one_b1: (1.0 - h.beta1) as f32,
            one_b2: (1.0 - h.beta2) as f32,
            step_size: (h.lr / bc1) as f32,
            bc2_sqrt: bc2.sqrt() as f32,
            eps: h.eps as f32,
            gscale: gscale as f32,
        }
    }
}

#[inline]
fn update_chunk(c: Consts, p: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32]) {
    let n = p.len();
    let (g, m, v) = (&g[..n], &mut m[..n], &mut v[..n]);
    for i in 0..n {
        let gi = g[i] * c.gscale;
        let mi = c.b1 * m[i] + c.one_b1 * gi;
        let vi = c.b2 * v[i] + c.one_b2 * gi * gi;
        m[i] = mi;
        v[i] = vi;
        let denom = vi.sqrt() / c.bc2_sqrt + c.eps;
        p[i] = p[i] * c.decay - c.step_size * (mi / denom);
    }
}

fn update_slices(c: Consts, p: &mut [f32], g: &[f32], m: &mut [f32], v: &mut [f32]) {
    p.par_chunks_mut(CHUNK)
        .zip(g.par_chunks(CHUNK))
        .zip(m.par_chunks_mut(CHUNK))
        .zip(v.par_chunks_mut(CHUNK))
        .for_each(|(((p, g), m), v)| update_chunk(c, p, g, m, v));
}

struct InPlace<'a> {
    c: Consts,
    g: &'a [f32],
    m: RefCell<&'a mut [f32]>,
    v: RefCell<&'a mut [f32]>,
}

impl InplaceOp1 for InPlace<'_> {
    fn name(&self) -> &'static str {
        "spade-adamw"
    }
    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> candle::Result<()> {
        let CpuStorage::F32(data) = storage else { candle::bail!("adamw: parameters must be f32") };
        let Some((a, b)) = layout.contiguous_offsets() else { candle::bail!("adamw: non-contiguous parameter") };
        let p = &mut data[a..b];
        if p.len() != self.g.len() {
            candle::bail!("adamw: gradient has {} elements, parameter {}", self.g.len(), p.len());
        }
        update_slices(self.c, p, self.g, &mut self.m.borrow_mut(), &mut self.v.borrow_mut());
        Ok(())
    }
}

/// One AdamW update of every parameter from accumulated gradients `grads` (same names), scaled by
/// `grad_scale` (the clipping factor). Advances `state.step`.
pub fn step(h: &AdamW, state: &mut State, vars: &BTreeMap<String, Var>, grads: &BTreeMap<String, Vec<f32>>, grad_scale: f64) -> anyhow::Result<()> {
    state.step += 1;
    let c = Consts::new(h, state.step, grad_scale);
    for (name, var) in vars {
        let g = grads.get(name).ok_or_else(|| anyhow::anyhow!("no gradient buffer for {name}"))?;
        let m = state.exp_avg.get_mut(name).ok_or_else(|| anyhow::anyhow!("optimizer state lacks {name}"))?;
        let v = state.exp_avg_sq.get_mut(name).ok_or_else(|| anyhow::anyhow!("optimizer state lacks {name}"))?;
        if m.len() != g.len() || v.len() != g.len() {
            anyhow::bail!("optimizer state of {name} has {} elements, parameter {}", m.len(), g.len());
        }
        if var.device().is_cpu() {
            let op = InPlace { c, g, m: RefCell::new(m.as_mut_slice()), v: RefCell::new(v.as_mut_slice()) };
            var.as_tensor().inplace_op1(&op)?;
        } else {
            // Other devices: update a host copy and write it back.
            let mut p: Vec<f32> = var.as_tensor().flatten_all()?.to_vec1()?;
            update_slices(c, &mut p, g, m, v);
            let t = Tensor::from_vec(p, var.shape(), &candle::Device::Cpu)?.to_device(var.device())?;
            var.set(&t)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use spade_model::candle_core::Device;

    #[test]
    fn schedules_warm_up_then_decay_towards_zero() {
        let lrs = |s: Schedule| (0..10).map(|i| s.lr(1.0, i, 10, 2)).collect::<Vec<_>>();
        for s in [Schedule::Constant, Schedule::Linear, Schedule::Cosine] {
            let v = lrs(s);
            assert!((v[0] - 1.0 / 3.0).abs() < 1e-12 && (v[1] - 2.0 / 3.0).abs() < 1e-12, "{s:?} warm-up {v:?}");
            assert_eq!(v[2], 1.0, "{s:?} peaks after the warm-up");
        }
        let (lin, cos) = (lrs(Schedule::Linear), lrs(Schedule::Cosine));
        assert!((lin[6] - 0.5).abs() < 1e-12 && (cos[6] - 0.5).abs() < 1e-12, "half way: {lin:?} {cos:?}");
        assert!(lin.windows(2).skip(2).all(|w| w[1] < w[0]) && cos.windows(2).skip(2).all(|w| w[1] < w[0]));
        assert!(cos[9] > 0.0 && cos[9] < 0.05 && lrs(Schedule::Constant)[9] == 1.0);
    }

    /// A plain scalar AdamW, written the way PyTorch's single-tensor path reads.
    fn reference(h: &AdamW, p: &mut [f64], g: &[f64], m: &mut [f64], v: &mut [f64], step: i32) {
        let bc1 = 1.0 - h.beta1.powi(step);
        let bc2 = 1.0 - h.beta2.powi(step);
        for i in 0..p.len() {
            p[i] *= 1.0 - h.lr * h.weight_decay;
            m[i] = h.beta1 * m[i] + (1.0 - h.beta1) * g[i];
            v[i] = h.beta2 * v[i] + (1.0 - h.beta2) * g[i] * g[i];
            p[i] -= h.lr / bc1 * m[i] / (v[i].sqrt() / bc2.sqrt() + h.eps);
        }
    }

    #[test]
    fn in_place_update_matches_the_scalar_formula() {
        let h = AdamW { lr: 1e-2, ..Default::default() };
        let n = 3 * CHUNK + 17;
        let p0: Vec<f32> = (0..n).map(|i| ((i as f32) * 0.37).sin()).collect();
        let g: Vec<f32> = (0..n).map(|i| ((i as f32) * 0.11).cos() * 0.01).collect();
        let var = Var::from_tensor(&Tensor::from_vec(p0.clone(), n, &Device::Cpu).unwrap()).unwrap();
        let mut vars = BTreeMap::new();
        vars.insert("w".to_string(), var.clone());
        let mut st = State::zeros(&vars);
        let grads: BTreeMap<String, Vec<f32>> = [("w".to_string(), g.clone())].into();
        let mut rp: Vec<f64> = p0.iter().map(|&x| x as f64).collect();
        let rg: Vec<f64> = g.iter().map(|&x| x as f64).collect();
        let (mut rm, mut rv) = (vec![0.0; n], vec![0.0; n]);
        for s in 1..=3 {
            step(&h, &mut st, &vars, &grads, 1.0).unwrap();
            reference(&h, &mut rp, &rg, &mut rm, &mut rv, s);
        }
        assert_eq!(st.step, 3);
        let got: Vec<f32> = var.as_tensor().to_vec1().unwrap();
        for i in (0..n).step_by(997) {
            assert!((got[i] as f64 - rp[i]).abs() < 1e-6, "{i}: {} vs {}", got[i], rp[i]);
        }
    }

    #[test]
    fn norm_and_clip_factor() {
        let g: BTreeMap<String, Vec<f32>> = [("a".to_string(), vec![3.0, 0.0]), ("b".to_string(), vec![4.0])].into();
        assert!((global_norm(&g) - 5.0).abs() < 1e-12);
        assert!((clip_factor(5.0, 1.0) - 1.0 / (5.0 + 1e-6)).abs() < 1e-12);
        assert_eq!(clip_factor(0.5, 1.0), 1.0);
        assert_eq!(clip_factor(50.0, 0.0), 1.0);
    }

    #[test]
    fn gradients_add_in_place() {
        let mut acc = vec![1.0f32; 6];
        let t = Tensor::from_vec(vec![1.0f32, 2., 3., 4., 5., 6.], (2, 3), &Device::Cpu).unwrap();
        spade_model::add_tensor(&mut acc, &t).unwrap();
        // Not contiguous: read through a copy.
        spade_model::add_tensor(&mut acc, &t.t().unwrap()).unwrap();
        assert_eq!(acc, vec![3.0, 7.0, 6.0, 10.0, 9.0, 13.0]);
        assert!(spade_model::add_tensor(&mut acc[..5], &t).is_err());
    }
}
