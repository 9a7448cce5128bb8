//! Scoring: log-probs of given tokens under the current weights at a temperature — the
//! trainer's primitive (differentiable), plus plain-vector conveniences.

use std::collections::BTreeMap;

use candle_core::backprop::GradStore;
use candle_core::{CpuStorage, CustomOp1, CustomOp2, DType, Layout, Shape, Tensor, Var, D};
use rayon::prelude::*;

use crate::blocks;
use crate::error::{Error, Result};
use crate::model::{Batch, Ctx, Lin, Model, Repr, Stack};
use crate::ops::f32_slice;
use crate::weights::layer_name;

/// Temperature as the divisor of the logits (T = 0 scores greedy decoding at T = 1).
fn divisor(temperature: f32) -> Result<f64> {
    if temperature < 0.0 {
        return Err(Error::Invalid("temperature must be ≥ 0".into()));
    }
    Ok(if temperature == 0.0 { 1.0 } else { temperature as f64 })
}

/// Per-token log-probs `(b, s)` from logits `(b, s, vocab)`: 0 at `t = 0` and at padding.
fn picked_logprobs(logits: &Tensor, batch: &Batch, t: f64) -> Result<Tensor> {
    let (b, s) = batch.input_ids.dims2()?;
    let v = logits.dim(2)?;
    // Position j predicts token j + 1; the last position of a row predicts nothing (its entry is
    // computed against token 0 and dropped), which keeps the logits one contiguous block.
    let ids = batch.input_ids.to_vec2::<u32>()?;
    let targets: Vec<u32> = ids.iter().flat_map(|row| row[1..].iter().copied().chain([0])).collect();
    let lp = target_logprobs(&logits.reshape((b * s, v))?, targets, t)?.reshape((b, s))?;
    let mask = batch.attention_mask.narrow(1, 1, s - 1)?.to_dtype(DType::F32)?;
    let picked = (lp.narrow(1, 0, s - 1)? * mask)?;
    let zero = Tensor::zeros((b, 1), DType::F32, logits.device())?;
    Ok(Tensor::cat(&[&zero, &picked], 1)?)
}

/// `log softmax(z / T)[target]` for every row of `(n, vocab)` logits `z`: `(n)`, differentiable.
/// On the CPU in f32 this is one fused op ([`TargetLogprob`]); elsewhere candle's composite ops.
fn target_logprobs(z: &Tensor, targets: Vec<u32>, t: f64) -> Result<Tensor> {
    let (n, v) = z.dims2()?;
    if targets.len() != n {
        return Err(Error::Invalid(format!("{} targets for {n} rows of logits", targets.len())));
    }
    if let Some(bad) = targets.iter().find(|&&x| x as usize >= v) {
        return Err(Error::Invalid(format!("token {bad} outside the vocabulary of {v}")));
    }
    if crate::ops::fused(z) {
        let op = TargetLogprob { targets: std::sync::Arc::new(targets), t: t as f32 };
        return Ok(z.contiguous()?.apply_op1(op)?);
    }
    composite_target_logprobs(z, targets, t)
}

/// [`target_logprobs`] with candle's composite ops (log-softmax, then gather).
fn composite_target_logprobs(z: &Tensor, targets: Vec<u32>, t: f64) -> Result<Tensor> {
    let n = targets.len();
    let lp = candle_nn::ops::log_softmax(&(z / t)?, D::Minus1)?;
    let idx = Tensor::from_vec(targets, (n, 1), z.device())?;
    Ok(lp.gather(&idx, 1)?.squeeze(1)?)
}

/// The fused CPU kernel of [`target_logprobs`]: per row, one pass for the maximum and one for
/// the sum of exponentials, and no `(n, vocab)` temporaries — where candle's composite
/// log-softmax + gather allocates and fills about ten of them, forward and backward, for a
/// vocabulary of 49k. Its backward ([`TargetLogprobGrad`]) writes `g · (onehot − softmax) / T` in
/// one pass.
struct TargetLogprob {
    targets: std::sync::Arc<Vec<u32>>,
    t: f32,
}

impl CustomOp1 for TargetLogprob {
    fn name(&self) -> &'static str {
        "target-logprob"
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let (n, v) = layout.shape().dims2()?;
        let z = f32_slice(storage, layout, self.name())?;
        let t = self.t;
        let out: Vec<f32> = z
            .par_chunks(v)
            .zip(self.targets.par_iter())
            .map(|(row, &k)| {
                let (m, log_sum) = crate::ops::row_lse(row, t);
                (row[k as usize] - m) / t - log_sum
            })
            .collect();
        Ok((CpuStorage::F32(out), Shape::from(n)))
    }

    fn bwd(&self, arg: &Tensor, _res: &Tensor, grad_res: &Tensor) -> candle_core::Result<Option<Tensor>> {
        let op = TargetLogprobGrad { targets: self.targets.clone(), t: self.t };
        Ok(Some(arg.contiguous()?.apply_op2_no_bwd(&grad_res.contiguous()?, &op)?))
    }
}

/// Gradient of [`TargetLogprob`] with respect to the logits, given the gradient `g` `(n)` of its
/// output: row `i` is `g_i / T · (onehot(target_i) − softmax(z_i / T))`.
struct TargetLogprobGrad {
    targets: std::sync::Arc<Vec<u32>>,
    t: f32,
}

impl CustomOp2 for TargetLogprobGrad {
    fn name(&self) -> &'static str {
        "target-logprob-grad"
    }

    fn cpu_fwd(&self, s1: &CpuStorage, l1: &Layout, s2: &CpuStorage, l2: &Layout) -> candle_core::Result<(CpuStorage, Shape)> {
        let (n, v) = l1.shape().dims2()?;
        let z = f32_slice(s1, l1, self.name())?;
        let g = f32_slice(s2, l2, self.name())?;
        let t = self.t;
        let mut out = vec![0f32; n * v];
        out.par_chunks_mut(v).zip(z.par_chunks(v)).zip(self.targets.par_iter()).zip(g.par_iter()).for_each(|(((o, row), &k), &gi)| {
            let c = gi / t;
            if c == 0.0 {
                return;
            }
            let (m, log_sum) = crate::ops::row_lse(row, t);
            for (oj, &x) in o.iter_mut().zip(row) {
                *oj = -c * ((x - m) / t - log_sum).exp();
            }
            o[k as usize] += c;
        });
        Ok((CpuStorage::F32(out), Shape::from((n, v))))
    }
}

/// Which tokens a scoring call needs the log-prob of: `None`, all of them; or one mask per
/// sequence (entry `t` for token `t`; missing entries are not needed). The head — final norm, LM
/// head over the whole vocabulary, log-softmax — runs only at the positions that predict a needed
/// token, and the other log-probs are 0. A trainer needs only the trained tokens: for a designer
/// sample, whose prompt is often longer than its environment, that skips most of the head's time
/// and memory.
pub type Needed<'a> = Option<&'a [Vec<bool>]>;

impl Model {
    /// Per-token log-probs `(b, s)` from the last block's output `x` `(b, s, hidden)`.
    /// `valid[r][j]`: whether token `j` of row `r` is real (not padding).
    fn logprobs_from_hidden(&self, st: &Stack, x: &Tensor, batch: &Batch, valid: &[Vec<u8>], t: f64, needed: Needed) -> Result<Tensor> {
        let Some(needed) = needed else {
            return picked_logprobs(&self.head(st, x, false)?, batch, t);
        };
        let (b, s) = batch.input_ids.dims2()?;
        let (from, to, target) = needed_positions(&batch.input_ids.to_vec2::<u32>()?, valid, Some(needed));
        let from: Vec<u32> = from.into_iter().map(|i| i as u32).collect();
        let to: Vec<u32> = to.into_iter().map(|i| i as u32).collect();
        let dev = x.device();
        let zeros = Tensor::zeros(b * s, DType::F32, dev)?;
        if from.is_empty() {
            return Ok(zeros.reshape((b, s))?);
        }
        let h = x.reshape((b * s, ()))?.index_select(&Tensor::new(from, dev)?, 0)?.unsqueeze(0)?;
        let picked = target_logprobs(&self.head(st, &h, false)?.squeeze(0)?, target, t)?;
        Ok(zeros.index_add(&Tensor::new(to, dev)?, &picked, 0)?.reshape((b, s))?)
    }
}

/// Log-probs with a blockwise backward: the forward keeps each block's input, and the backward
/// goes through the network one block at a time, from the last. A block whose activations were
/// kept (within the byte budget of [`Model::token_logprobs_blockwise`]) is differentiated from
/// them; the others are first recomputed from their input (activation checkpointing): a
/// backward then holds the activations of one block instead of all of them — what makes
/// designer sequences of a few thousand tokens fit in a laptop's memory, for about one more
/// forward of compute. On the CPU in f32 the blocks and the head are the written-out forward
/// and backward of `crate::blocks`, which add their gradients straight into the caller's
/// buffers; elsewhere (and with `SPADE_AUTOGRAD=1`) candle's autograd differentiates each block.
/// Gradients equal the plain backward's up to float rounding.
pub struct Checkpointed<'a> {
    model: &'a Model,
    input_ids: Tensor,
    logprobs: Tensor,
    tape: Tape,
}

/// What the forward kept (one per micro-batch: the variants' sizes do not matter).
#[allow(clippy::large_enum_variant)]
enum Tape {
    /// candle's autograd, one block at a time from its detached input; the head's graph hangs
    /// off `top`, the last block's output, and ends in `graph` (the log-probs).
    Autograd { ctx: Ctx, inputs: Vec<Tensor>, top: Var, graph: Tensor },
    /// The written-out blocks: every block's input, the activations of those that fit, and the
    /// head (None when no token is needed) with the flat position each log-prob lands at.
    /// `out`: the log-probs' shape `(b, s)` (the input's, except for a packed row).
    Blocks {
        shared: blocks::Shared,
        inputs: Vec<Vec<f32>>,
        acts: Vec<Option<blocks::Acts>>,
        head: Option<(blocks::Head, Vec<usize>)>,
        out: (usize, usize),
    },
}

/// The environment variable that sends the blockwise backward through candle's autograd even
/// where the written-out blocks apply (`1`): for comparisons.
pub const AUTOGRAD_ENV: &str = "SPADE_AUTOGRAD";

/// Gradient buffers by weight name, as [`crate::Weights::named_vars`] names them.
pub type GradBuffers = BTreeMap<String, Vec<f32>>;

/// Add every gradient of `store` into its weight's buffer (`acc += g`).
pub fn add_store(model: &Model, store: &GradStore, grads: &mut GradBuffers) -> Result<()> {
    for (name, var) in model.weights().named_vars() {
        if let Some(g) = store.get(var.as_tensor()) {
            let acc = grads.get_mut(name).ok_or_else(|| Error::Invalid(format!("no gradient buffer for {name}")))?;
            add_tensor(acc, g)?;
        }
    }
    Ok(())
}

/// `acc += g`, reading CPU storage in place.
pub fn add_tensor(acc: &mut [f32], g: &Tensor) -> Result<()> {
    const CHUNK: usize = 1 << 16;
    let add = |acc: &mut [f32], src: &[f32]| -> Result<()> {
        if src.len() != acc.len() {
            return Err(Error::Invalid(format!("gradient has {} elements, buffer {}", src.len(), acc.len())));
        }
        acc.par_chunks_mut(CHUNK).zip(src.par_chunks(CHUNK)).for_each(|(d, s)| d.iter_mut().zip(s).for_each(|(x, y)| *x += *y));
        Ok(())
    };
    if g.device().is_cpu() && g.dtype() == DType::F32 {
        let (storage, layout) = g.storage_and_layout();
        if let (candle_core::Storage::Cpu(c), Some((a, b))) = (&*storage, layout.contiguous_offsets()) {
            return add(acc, &c.as_slice::<f32>()?[a..b]);
        }
    }
    add(acc, &g.to_dtype(DType::F32)?.flatten_all()?.to_vec1::<f32>()?)
}

/// Take the named buffers out of `grads` (to hold several mutably at once); [`put_back`] returns them.
fn take(grads: &mut GradBuffers, names: &[String]) -> Vec<Option<Vec<f32>>> {
    names.iter().map(|n| grads.remove(n)).collect()
}

fn put_back(grads: &mut GradBuffers, names: &[String], bufs: Vec<Option<Vec<f32>>>) {
    for (n, b) in names.iter().zip(bufs) {
        if let Some(b) = b {
            grads.insert(n.clone(), b);
        }
    }
}

impl Checkpointed<'_> {
    /// Per-token log-probs `(batch, max_len)`, as [`Model::token_logprobs`].
    pub fn logprobs(&self) -> &Tensor {
        &self.logprobs
    }

    /// How many blocks kept their activations (their backward skips the recomputation).
    pub fn kept_blocks(&self) -> usize {
        match &self.tape {
            Tape::Autograd { .. } => 0,
            Tape::Blocks { acts, .. } => acts.iter().filter(|a| a.is_some()).count(),
        }
    }

    /// Backward of `Σ coef ⊙ logprobs`: `sink` receives gradient stores whose entries, summed
    /// per weight, are the gradients (tied embeddings get two). The written-out blocks hand over
    /// one store with every weight (zeros when no token was needed); [`Checkpointed::backward_into`]
    /// adds into buffers without that copy.
    pub fn backward(self, coef: &Tensor, mut sink: impl FnMut(&GradStore) -> Result<()>) -> Result<()> {
        if matches!(self.tape, Tape::Blocks { .. }) {
            let m = self.model;
            let vars = m.weights().named_vars();
            let mut grads: GradBuffers = vars.iter().map(|(k, v)| (k.clone(), blocks::zeros(v.elem_count()))).collect();
            self.backward_into(coef, &mut grads)?;
            let mut store = GradStore::default();
            for (name, var) in vars {
                let g = grads.remove(name).expect("a buffer per weight");
                store.insert(var.as_tensor(), Tensor::from_vec(g, var.shape(), &m.device)?);
            }
            return sink(&store);
        }
        let Tape::Autograd { ctx, inputs, top, graph } = self.tape else { unreachable!() };
        let m = self.model;
        let st = m.stack(Repr::F32, true)?;
        let missing = || Error::Invalid("no gradient reached a block's input".into());
        let store = (graph * coef)?.sum_all()?.backward()?;
        // No log-prob was needed: every gradient is zero.
        let Some(mut g) = store.get(top.as_tensor()).cloned() else { return Ok(()) };
        sink(&store)?;
        drop(store);
        for (l, layer) in st.layers.iter().enumerate().rev() {
            let x = Var::from_tensor(&inputs[l])?;
            let y = m.block(layer, x.as_tensor(), &ctx, None, false)?;
            let store = (y * &g)?.sum_all()?.backward()?;
            g = store.get(x.as_tensor()).cloned().ok_or_else(missing)?;
            sink(&store)?;
        }
        let e = m.embed(st, &self.input_ids)?;
        let store = (e * &g)?.sum_all()?.backward()?;
        sink(&store)
    }

    /// [`Checkpointed::backward`] adding each weight's gradient into its buffer in `grads` (one
    /// per weight, named as [`crate::Weights::named_vars`]).
    pub fn backward_into(self, coef: &Tensor, grads: &mut GradBuffers) -> Result<()> {
        let m = self.model;
        let Tape::Blocks { shared, mut inputs, mut acts, head, out } = self.tape else {
            return self.backward(coef, |store| add_store(m, store, grads));
        };
        // No log-prob was needed: every gradient is zero.
        let Some((head, to)) = head else { return Ok(()) };
        let st = m.stack(Repr::F32, true)?;
        let missing = || Error::Invalid("the blockwise backward lost a block's input".into());
        let (d, n) = (shared.dims.d, shared.dims.b * shared.dims.s);
        if coef.dims() != [out.0, out.1] {
            return Err(Error::Invalid(format!("coefficients of shape {:?} for log-probs {:?}", coef.dims(), [out.0, out.1])));
        }
        let coef = coef.flatten_all()?.to_vec1::<f32>()?;
        let coef: Vec<f32> = to.iter().map(|&i| coef[i]).collect();
        let embed_name = "model.embed_tokens.weight".to_string();
        let head_name = if m.weights.get_opt("lm_head.weight").is_some() { "lm_head.weight".to_string() } else { embed_name.clone() };
        let Lin::Dense(head_w) = &st.head else { return Err(Error::Invalid("quantised head in the blockwise backward".into())) };
        let mut g = blocks::zeros(n * d);
        let names = vec!["model.norm.weight".to_string(), head_name];
        let mut bufs = take(grads, &names);
        let res = match &mut bufs[..] {
            [Some(dn), Some(dh)] => blocks::head_backward(head, d, &coef, (&st.norm, head_w), dn, dh, &mut g),
            _ => Err(Error::Invalid("no gradient buffer for the final norm or the head".into())),
        };
        put_back(grads, &names, bufs);
        res?;
        for (l, layer) in st.layers.iter().enumerate().rev() {
            let x = inputs.pop().ok_or_else(missing)?;
            let a = match acts.pop().flatten() {
                Some(a) => a,
                None => blocks::forward(layer, &shared, &x, true)?.1.ok_or_else(missing)?,
            };
            let names: Vec<String> = blocks::LAYER_WEIGHTS.iter().map(|w| layer_name(l, w)).collect();
            let mut bufs = take(grads, &names);
            let res = blocks::backward(layer, &shared, &x, &a, &g, &mut blocks::LayerGrads(bufs.iter_mut().map(|b| b.as_deref_mut()).collect()));
            put_back(grads, &names, bufs);
            g = res?;
        }
        let de = grads.get_mut(&embed_name).ok_or_else(|| Error::Invalid("no gradient buffer for the embeddings".into()))?;
        let ids = self.input_ids.flatten_all()?.to_vec1::<u32>()?;
        for (&tok, gr) in ids.iter().zip(g.chunks(d)) {
            de[tok as usize * d..(tok as usize + 1) * d].iter_mut().zip(gr).for_each(|(a, b)| *a += b);
        }
        Ok(())
    }
}

/// Which flat positions predict a needed token: `(from, to, target)` — position `from` predicts
/// token `target`, whose log-prob lands at `to` (see [`Needed`]; `None`: every real token).
fn needed_positions(ids: &[Vec<u32>], valid: &[Vec<u8>], needed: Needed) -> (Vec<usize>, Vec<usize>, Vec<u32>) {
    let s = ids.first().map(Vec::len).unwrap_or(0);
    let (mut from, mut to, mut target) = (Vec::new(), Vec::new(), Vec::new());
    for (r, row) in ids.iter().enumerate() {
        for j in 1..s {
            let want = match needed {
                None => true,
                Some(nd) => nd.get(r).and_then(|m| m.get(j)).copied().unwrap_or(false),
            };
            if valid[r][j] != 0 && want {
                from.push(r * s + j - 1);
                to.push(r * s + j);
                target.push(row[j]);
            }
        }
    }
    (from, to, target)
}

impl Model {
    /// Per-token log-probs of whole sequences, `(batch, max_len)`, aligned one-to-one with the
    /// tokens: entry `[i, t]` is `log softmax(logits / T)[seq_i[t]]` given `seq_i[..t]`; 0 at
    /// `t = 0` and at padding. Differentiable with respect to the weights (f32). T = 0 is
    /// scored as T = 1, as generation reports greedy tokens.
    pub fn token_logprobs(&self, seqs: &[Vec<u32>], temperature: f32) -> Result<Tensor> {
        self.token_logprobs_repr(Repr::F32, seqs, temperature)
    }

    /// [`Model::token_logprobs`] in a chosen representation.
    pub fn token_logprobs_repr(&self, repr: Repr, seqs: &[Vec<u32>], temperature: f32) -> Result<Tensor> {
        let t = divisor(temperature)?;
        let batch = Batch::new(seqs, self.tokenizer.pad_id(), false, &self.device)?;
        let (b, s) = batch.input_ids.dims2()?;
        if s < 2 {
            return Ok(Tensor::zeros((b, s), DType::F32, &self.device)?);
        }
        let logits = self.forward_repr(repr, &batch.input_ids, Some(&batch.attention_mask))?;
        picked_logprobs(&logits, &batch, t)
    }

    /// [`Model::token_logprobs`] (f32, differentiable) of the `needed` tokens only (see
    /// [`Needed`]); the others are 0 and get no gradient. The whole graph is kept for the
    /// backward: faster than [`Model::token_logprobs_checkpointed`], for more memory.
    pub fn token_logprobs_needed(&self, seqs: &[Vec<u32>], temperature: f32, needed: Needed) -> Result<Tensor> {
        self.needed_logprobs(seqs, temperature, needed, true)
    }

    /// [`Model::token_logprobs`] (f32) without gradient, as plain numbers (one row per sequence,
    /// padded with 0 to the longest): the same values, but the forward frees each layer's
    /// activations as it goes instead of keeping them for a backward.
    /// Only the `needed` tokens are scored (see [`Needed`]); the others are 0.
    pub fn token_logprobs_no_grad(&self, seqs: &[Vec<u32>], temperature: f32, needed: Needed) -> Result<Vec<Vec<f32>>> {
        Ok(self.needed_logprobs(seqs, temperature, needed, false)?.to_vec2::<f32>()?)
    }

    fn needed_logprobs(&self, seqs: &[Vec<u32>], temperature: f32, needed: Needed, grad: bool) -> Result<Tensor> {
        let t = divisor(temperature)?;
        let batch = Batch::new(seqs, self.tokenizer.pad_id(), false, &self.device)?;
        let (b, s) = batch.input_ids.dims2()?;
        if s < 2 {
            return Ok(Tensor::zeros((b, s), DType::F32, &self.device)?);
        }
        let valid = batch.attention_mask.to_vec2::<u8>()?;
        let st = self.stack(Repr::F32, grad)?;
        // Without gradient, the written-out blocks where they apply: the same forward as the
        // trainer's blockwise one, so log-probs scored here (the step's old and reference ones)
        // equal its current ones bit for bit at the same weights.
        if let Some(shared) = self.written_out(st, &batch, &valid).filter(|_| !grad) {
            let picks = needed_positions(&batch.input_ids.to_vec2::<u32>()?, &shared.valid, needed);
            return Ok(self.blocks_forward(st, &batch.input_ids, shared, t, picks, (b, s), None)?.0);
        }
        let x = self.run_hidden(st, &batch.input_ids, &valid, None, false)?;
        self.logprobs_from_hidden(st, &x, &batch, &valid, t, needed)
    }

    /// The written-out forward over `ids` `(b, s)`: log-probs of shape `out` with the picked
    /// tokens (`(from, to, target)`: see [`needed_positions`]), and with `keep` (a byte budget
    /// for kept activations) the tape of a blockwise backward.
    #[allow(clippy::too_many_arguments)]
    fn blocks_forward(
        &self,
        st: &Stack,
        ids: &Tensor,
        shared: blocks::Shared,
        t: f64,
        (from, to, target): (Vec<usize>, Vec<usize>, Vec<u32>),
        out: (usize, usize),
        keep: Option<usize>,
    ) -> Result<(Tensor, Option<Tape>)> {
        let dims = shared.dims;
        let mut x = self.embed(st, ids)?.flatten_all()?.to_vec1::<f32>()?;
        let (mut inputs, mut acts) = (Vec::new(), Vec::new());
        let mut budget = keep.unwrap_or(0);
        for layer in &st.layers {
            let kept = budget >= dims.act_bytes();
            if kept {
                budget -= dims.act_bytes();
            }
            let (y, a) = blocks::forward(layer, &shared, &x, kept)?;
            let input = std::mem::replace(&mut x, y);
            if keep.is_some() {
                inputs.push(input);
                acts.push(a);
            }
        }
        let mut lp = vec![0f32; out.0 * out.1];
        let head = if from.is_empty() {
            None
        } else {
            let Lin::Dense(hw) = &st.head else { return Err(Error::Invalid("quantised head in the written-out forward".into())) };
            let (vals, head) = blocks::head_forward(&x, dims.d, (from, target), (&st.norm, hw), dims.eps, t as f32)?;
            for (&i, v) in to.iter().zip(vals) {
                lp[i] = v;
            }
            Some((head, to))
        };
        let lp = Tensor::from_vec(lp, out, &self.device)?;
        Ok((lp, keep.map(|_| Tape::Blocks { shared, inputs, acts, head, out })))
    }

    /// Log-probs of sequences that all begin with the same `prefix` tokens, the prefix run once:
    /// one row holds the prefix and then each sequence's rest, every rest attending to the prefix
    /// and to itself only, at the positions it has in its own sequence (`blocks::Shared::packed`).
    /// The same numbers as [`Model::token_logprobs_blockwise`] on the sequences one by one up to
    /// float rounding, for the prefix's compute once instead of once per sequence (a GRPO group
    /// shares its prompt). `needed` must be given and leave the prefix's tokens out. `keep`: as
    /// [`Model::token_logprobs_blockwise`]'s budget, or None for log-probs without a backward
    /// (zeros for the tape). Where the written-out blocks do not apply (candle's autograd path),
    /// the sequences are scored unpacked.
    pub fn token_logprobs_shared_prefix(
        &self,
        seqs: &[Vec<u32>],
        prefix: usize,
        temperature: f32,
        needed: &[Vec<bool>],
        keep: Option<usize>,
    ) -> Result<(Tensor, Option<Checkpointed<'_>>)> {
        let t = divisor(temperature)?;
        let bad = |why: String| Err(Error::Invalid(format!("shared-prefix scoring: {why}")));
        if seqs.is_empty() || prefix == 0 || needed.len() != seqs.len() {
            return bad(format!("{} sequences, prefix {prefix}, {} needed rows", seqs.len(), needed.len()));
        }
        for (r, q) in seqs.iter().enumerate() {
            if q.len() <= prefix || q[..prefix] != seqs[0][..prefix] {
                return bad(format!("sequence {r} ({} tokens) does not extend the {prefix}-token prefix", q.len()));
            }
            if needed[r].iter().take(prefix).any(|&x| x) {
                return bad(format!("sequence {r} needs a log-prob inside the prefix"));
            }
        }
        let st = self.stack(Repr::F32, keep.is_some())?;
        let c = &self.config;
        let rests: Vec<usize> = seqs.iter().map(|q| q.len() - prefix).collect();
        let n = prefix + rests.iter().sum::<usize>();
        if !Self::blocks_apply(st) || !self.device.is_cpu() {
            return match keep {
                Some(k) => {
                    let c = self.token_logprobs_blockwise(seqs, temperature, Some(needed), k)?;
                    Ok((c.logprobs().clone(), Some(c)))
                }
                None => Ok((self.needed_logprobs(seqs, temperature, Some(needed), false)?, None)),
            };
        }
        let mut ids: Vec<u32> = seqs[0][..prefix].to_vec();
        let mut starts = Vec::with_capacity(seqs.len());
        for q in seqs {
            starts.push(ids.len());
            ids.extend_from_slice(&q[prefix..]);
        }
        let s_out = seqs.iter().map(Vec::len).max().unwrap_or(0);
        let at = |r: usize, j: usize| if j < prefix { j } else { starts[r] + j - prefix };
        let (mut from, mut to, mut target) = (Vec::new(), Vec::new(), Vec::new());
        for (r, q) in seqs.iter().enumerate() {
            for (j, &tok) in q.iter().enumerate().skip(prefix.max(1)) {
                if needed[r].get(j).copied().unwrap_or(false) {
                    from.push(at(r, j - 1));
                    to.push(r * s_out + j);
                    target.push(tok);
                }
            }
        }
        let shared = crate::blocks::Shared::packed(self.blocks_dims(1, n), &c.inv_freq(), prefix, &rests);
        let input_ids = Tensor::from_vec(ids, (1, n), &self.device)?;
        let (logprobs, tape) = self.blocks_forward(st, &input_ids, shared, t, (from, to, target), (seqs.len(), s_out), keep)?;
        let ck = tape.map(|tape| Checkpointed { model: self, input_ids, logprobs: logprobs.clone(), tape });
        Ok((logprobs, ck))
    }

    /// What the written-out blocks share over `batch`, when they apply to every layer of `st`
    /// (and `SPADE_AUTOGRAD` is not 1).
    fn written_out(&self, st: &Stack, batch: &Batch, valid: &[Vec<u8>]) -> Option<crate::blocks::Shared> {
        if !Self::blocks_apply(st) {
            return None;
        }
        let (b, s) = batch.input_ids.dims2().ok()?;
        Some(crate::blocks::Shared::new(self.blocks_dims(b, s), &self.config.inv_freq(), valid.to_vec()))
    }

    /// Whether the written-out blocks run every layer of `st` (and `SPADE_AUTOGRAD` is not 1).
    fn blocks_apply(st: &Stack) -> bool {
        std::env::var(AUTOGRAD_ENV).map_or(true, |v| v != "1") && st.layers.iter().all(crate::blocks::supported)
    }

    /// The written-out blocks' dimensions for `b` rows of `s` positions of this model.
    fn blocks_dims(&self, b: usize, s: usize) -> crate::blocks::Dims {
        let c = &self.config;
        crate::blocks::Dims {
            b,
            s,
            d: c.hidden_size,
            nh: c.num_attention_heads,
            nkv: c.num_kv_heads(),
            hd: c.head_dim(),
            f: c.intermediate_size,
            eps: c.rms_norm_eps as f32,
        }
    }

    /// [`Model::token_logprobs`] (f32) with an activation-checkpointed backward: see
    /// [`Checkpointed`]. Sequences need at least two tokens. Only the `needed` tokens are scored
    /// (see [`Needed`]); the others are 0 and get no gradient.
    pub fn token_logprobs_checkpointed(&self, seqs: &[Vec<u32>], temperature: f32, needed: Needed) -> Result<Checkpointed<'_>> {
        self.token_logprobs_blockwise(seqs, temperature, needed, 0)
    }

    /// [`Model::token_logprobs_checkpointed`] that keeps the activations of the first blocks
    /// while they fit in `keep_bytes` (their backward then skips the recomputation; written-out
    /// blocks only, see [`Checkpointed`]).
    pub fn token_logprobs_blockwise(&self, seqs: &[Vec<u32>], temperature: f32, needed: Needed, keep_bytes: usize) -> Result<Checkpointed<'_>> {
        let t = divisor(temperature)?;
        let batch = Batch::new(seqs, self.tokenizer.pad_id(), false, &self.device)?;
        let (_, s) = batch.input_ids.dims2()?;
        if s < 2 {
            return Err(Error::Invalid("checkpointed scoring needs sequences of at least two tokens".into()));
        }
        let st = self.stack(Repr::F32, true)?;
        let valid = batch.attention_mask.to_dtype(DType::U8)?.to_vec2::<u8>()?;
        if let Some(shared) = self.written_out(st, &batch, &valid) {
            let picks = needed_positions(&batch.input_ids.to_vec2::<u32>()?, &shared.valid, needed);
            let (b, s) = (shared.dims.b, shared.dims.s);
            let (logprobs, tape) = self.blocks_forward(st, &batch.input_ids, shared, t, picks, (b, s), Some(keep_bytes))?;
            let tape = tape.expect("a tape when keeping");
            return Ok(Checkpointed { model: self, input_ids: batch.input_ids, logprobs, tape });
        }
        let ctx = self.prepare(&batch.input_ids, &valid, false)?;
        let mut x = self.embed(st, &batch.input_ids)?.detach();
        let mut inputs = Vec::with_capacity(st.layers.len());
        for layer in &st.layers {
            let y = self.block(layer, &x, &ctx, None, false)?.detach();
            inputs.push(x);
            x = y;
        }
        let top = Var::from_tensor(&x)?;
        let graph = self.logprobs_from_hidden(st, top.as_tensor(), &batch, &valid, t, needed)?;
        let logprobs = graph.detach();
        Ok(Checkpointed { model: self, input_ids: batch.input_ids, logprobs, tape: Tape::Autograd { ctx, inputs, top, graph } })
    }

    /// Log-probs of `completion` after `prompt` (length `completion.len()`), differentiable.
    pub fn score(&self, prompt: &[u32], completion: &[u32], temperature: f32) -> Result<Tensor> {
        if prompt.is_empty() {
            return Err(Error::Invalid("scoring needs at least one prompt token".into()));
        }
        let seq: Vec<u32> = prompt.iter().chain(completion).copied().collect();
        let lp = self.token_logprobs(&[seq], temperature)?;
        Ok(lp.squeeze(0)?.narrow(0, prompt.len(), completion.len())?)
    }

    /// [`Model::score`] as plain numbers (no gradient).
    pub fn score_vec(&self, prompt: &[u32], completion: &[u32], temperature: f32) -> Result<Vec<f32>> {
        let pair = [(prompt.to_vec(), completion.to_vec())];
        Ok(self.score_batch(&pair, temperature)?.pop().unwrap_or_default())
    }

    /// Score many (prompt, completion) pairs in one batch; plain numbers, one vector per pair.
    pub fn score_batch(&self, pairs: &[(Vec<u32>, Vec<u32>)], temperature: f32) -> Result<Vec<Vec<f32>>> {
        if pairs.iter().any(|(p, _)| p.is_empty()) {
            return Err(Error::Invalid("scoring needs at least one prompt token".into()));
        }
        let seqs: Vec<Vec<u32>> = pairs.iter().map(|(p, c)| p.iter().chain(c).copied().collect()).collect();
        let needed: Vec<Vec<bool>> = pairs.iter().map(|(p, c)| (0..p.len() + c.len()).map(|j| j >= p.len()).collect()).collect();
        let lp = self.token_logprobs_no_grad(&seqs, temperature, Some(&needed))?;
        Ok(pairs.iter().zip(lp).map(|((p, c), row)| row[p.len()..p.len() + c.len()].to_vec()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    /// The fused kernel against candle's composite log-softmax + gather: values and gradients.
    #[test]
    fn fused_target_logprobs_equal_the_composite_ops() {
        let dev = Device::Cpu;
        let (n, v) = (6, 37);
        let vals: Vec<f32> = (0..n * v).map(|k| ((k * 7919 % 101) as f32 / 101.0 - 0.5) * 8.0).collect();
        let targets: Vec<u32> = (0..n as u32).map(|i| (i * 11) % v as u32).collect();
        let coef = Tensor::new(&[1.0f32, -0.5, 0.0, 2.0, 0.25, -1.5], &dev).unwrap();
        for t in [1.0, 0.7] {
            let z = Var::from_vec(vals.clone(), (n, v), &dev).unwrap();
            let fused = target_logprobs(z.as_tensor(), targets.clone(), t).unwrap();
            let g_fused = (&fused * &coef).unwrap().sum_all().unwrap().backward().unwrap();
            let plain = composite_target_logprobs(z.as_tensor(), targets.clone(), t).unwrap();
            let g_plain = (&plain * &coef).unwrap().sum_all().unwrap().backward().unwrap();
            let d = (&fused - &plain).unwrap().abs().unwrap().max(0).unwrap().to_scalar::<f32>().unwrap();
            assert!(d < 1e-5, "T={t}: log-probs differ by {d}");
            let (a, b) = (g_fused.get(z.as_tensor()).unwrap(), g_plain.get(z.as_tensor()).unwrap());
            let d = (a - b).unwrap().abs().unwrap().flatten_all().unwrap().max(0).unwrap().to_scalar::<f32>().unwrap();
            assert!(d < 1e-6, "T={t}: gradients differ by {d}");
            // A zero coefficient leaves its row's gradient zero.
            assert!(a.get(2).unwrap().to_vec1::<f32>().unwrap().iter().all(|x| *x == 0.0));
        }
        let z = Tensor::zeros((2, 5), DType::F32, &dev).unwrap();
        assert!(target_logprobs(&z, vec![1, 5], 1.0).is_err());
        assert!(target_logprobs(&z, vec![1], 1.0).is_err());
    }

    /// Every weight has a gradient in `want`, and `got`'s is within 1e-5 of it relatively.
    fn grads_close(want: &GradBuffers, got: &GradBuffers) {
        for (k, a) in want {
            let g = &got[k];
            let norm = a.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
            let diff = a.iter().zip(g).map(|(x, y)| ((*x - *y) as f64).powi(2)).sum::<f64>().sqrt();
            assert!(norm > 0.0, "{k}: no gradient");
            assert!(diff <= 1e-5 * norm, "{k}: relative difference {}", diff / norm);
        }
    }

    /// The written-out blocks and head against candle's autograd over the whole graph, on
    /// sequences long enough for several causal row blocks, right-padded, with and without
    /// kept activations: log-probs and every weight's gradient.
    #[test]
    fn written_out_blocks_equal_the_autograd_graph() {
        let m = crate::tiny::tiny_model(5, crate::tiny::TinySpec::default(), &Device::Cpu).unwrap();
        let seqs: Vec<Vec<u32>> =
            [300usize, 170, 129].iter().enumerate().map(|(r, &n)| (0..n).map(|j| 3 + ((j * 7919 + r * 131) % 250) as u32).collect()).collect();
        let needed: Vec<Vec<bool>> = seqs.iter().map(|q| (0..q.len()).map(|j| j % 3 != 0).collect()).collect();
        let (b, s) = (seqs.len(), 300);
        let coef: Vec<f32> = (0..b * s).map(|k| ((k * 37 % 11) as f32 - 5.0) / 7.0).collect();
        let coef = Tensor::from_vec(coef, (b, s), &Device::Cpu).unwrap();
        let fresh = || -> GradBuffers { m.weights().named_vars().iter().map(|(k, v)| (k.clone(), vec![0f32; v.elem_count()])).collect() };
        let lp = m.token_logprobs_needed(&seqs, 0.8, Some(&needed)).unwrap();
        let mut want = fresh();
        add_store(&m, &(&lp * &coef).unwrap().sum_all().unwrap().backward().unwrap(), &mut want).unwrap();
        let lp = lp.to_vec2::<f32>().unwrap();
        for keep in [usize::MAX, 0] {
            let c = m.token_logprobs_blockwise(&seqs, 0.8, Some(&needed), keep).unwrap();
            assert_eq!(c.kept_blocks(), if keep == 0 { 0 } else { 2 });
            let got_lp = c.logprobs().to_vec2::<f32>().unwrap();
            let d = lp.iter().flatten().zip(got_lp.iter().flatten()).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
            assert!(d < 1e-5, "log-probs differ by {d}");
            let mut got = fresh();
            c.backward_into(&coef, &mut got).unwrap();
            grads_close(&want, &got);
        }
    }

    /// Sequences sharing a prefix, packed in one row with the prefix once, against the
    /// unpacked blockwise path: log-probs (the first token after the prefix included, which the
    /// prefix's last position predicts), every weight's gradient with kept and recomputed
    /// blocks, and the no-gradient values; the rests cross the 128-row causal blocks. Bad
    /// input is refused.
    #[test]
    fn shared_prefix_packing_equals_the_sequences_one_by_one() {
        let m = crate::tiny::tiny_model(5, crate::tiny::TinySpec::default(), &Device::Cpu).unwrap();
        let prefix = 150;
        let head: Vec<u32> = (0..prefix).map(|j| 3 + ((j * 7919) % 250) as u32).collect();
        let seqs: Vec<Vec<u32>> = [90usize, 200, 41]
            .iter()
            .enumerate()
            .map(|(r, &n)| head.iter().copied().chain((0..n).map(|j| 3 + ((j * 104_729 + r * 131) % 250) as u32)).collect())
            .collect();
        let needed: Vec<Vec<bool>> = seqs.iter().map(|q| (0..q.len()).map(|j| j >= prefix && (j == prefix || j % 3 != 0)).collect()).collect();
        let (b, s) = (seqs.len(), seqs.iter().map(Vec::len).max().unwrap());
        let coef: Vec<f32> = (0..b * s).map(|k| ((k * 37 % 11) as f32 - 5.0) / 7.0).collect();
        let coef = Tensor::from_vec(coef, (b, s), &Device::Cpu).unwrap();
        let fresh = || -> GradBuffers { m.weights().named_vars().iter().map(|(k, v)| (k.clone(), vec![0f32; v.elem_count()])).collect() };
        let plain = m.token_logprobs_blockwise(&seqs, 0.8, Some(&needed), usize::MAX).unwrap();
        let want_lp = plain.logprobs().to_vec2::<f32>().unwrap();
        let mut want = fresh();
        plain.backward_into(&coef, &mut want).unwrap();
        let close = |got: &[Vec<f32>]| {
            let d = want_lp.iter().flatten().zip(got.iter().flatten()).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
            assert!(d < 1e-5, "log-probs differ by {d}");
            assert!(got[0][prefix] != 0.0 && got[2][prefix] != 0.0, "the first token after the prefix is scored");
        };
        for keep in [usize::MAX, 0] {
            let (lp, c) = m.token_logprobs_shared_prefix(&seqs, prefix, 0.8, &needed, Some(keep)).unwrap();
            close(&lp.to_vec2::<f32>().unwrap());
            let c = c.unwrap();
            assert_eq!(c.kept_blocks(), if keep == 0 { 0 } else { 2 });
            let mut got = fresh();
            c.backward_into(&coef, &mut got).unwrap();
            grads_close(&want, &got);
        }
        let (lp, none) = m.token_logprobs_shared_prefix(&seqs, prefix, 0.8, &needed, None).unwrap();
        assert!(none.is_none());
        close(&lp.to_vec2::<f32>().unwrap());
        let mut inside = needed.clone();
        inside[1][prefix - 1] = true;
        assert!(m.token_logprobs_shared_prefix(&seqs, prefix, 0.8, &inside, None).is_err());
        let mut other = seqs.clone();
        other[2][7] += 1;
        assert!(m.token_logprobs_shared_prefix(&other, prefix, 0.8, &needed, None).is_err());
    }
}
