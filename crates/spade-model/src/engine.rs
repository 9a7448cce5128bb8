//! The generation engine: continuous batching over a fixed number of slots, with each
//! sequence's keys and values kept in its own buffers and reused wherever a prompt extends tokens
//! already computed.
//!
//! - **Slots.** At most `max_batch` sequences decode together; a sequence that finishes frees
//!   its slot at once for the next waiting prompt (no batch waits for its slowest member).
//! - **One flat step.** Every step runs the new tokens of all live sequences as the rows of one
//!   matrix (a decoding sequence brings one row, a prefilling one a chunk of its prompt): the
//!   linear layers are one GEMM over all rows, attention is computed per sequence over its own
//!   cache (no padding, no masks).
//! - **Prefix reuse.** A prompt starting with tokens whose keys and values are known (another
//!   live sequence's, or a finished sequence's kept in the model's [`KvStore`]) copies them and
//!   prefills only the rest: the G samples of a group prefill their prompt once, and an
//!   episode's next turn (its transcript so far plus the environment's reply) prefills only the
//!   reply when the store is kept across calls ([`crate::Model::set_prefix_cache`]).
//! - **Bounded memory.** A sequence reserves its prompt plus its token budget; one that would
//!   take the live sequences over the KV budget waits; the store gives back its oldest entries
//!   first.
//!
//! Every row is computed by the same arithmetic whatever its batch-mates (per-row GEMMs,
//! per-row attention), and every sequence samples from its own seeded stream, so a sequence's
//! output does not depend on the slot count or on the order in which the others finish.
//!
//! Attention is written out here (dot products and an axpy per key, eight lanes wide), on the
//! CPU in f32; the projections run on the stack's representation: f32 (log-probs equal the
//! scorer's) or quantised ([`crate::Repr`]).

use std::collections::VecDeque;

use candle_core::{Module, Tensor};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::blocks::{gemm, softmax_in_place, with_f32};
use crate::error::{Error, Result};
use crate::generate::{sample, FinishReason, Generation, GenerationRequest, SamplingParams};
use crate::kernels::attend::Elem;
use crate::kv::{accumulate, common_prefix, Buf, EngineStats, KvStore, SeqKv};
use crate::model::{Lin, Model, Repr, Stack};

/// Prompt positions one sequence prefills per step (chunked prefill keeps a long prompt from
/// stalling the decoding sequences for long).
const CHUNK: usize = 256;
/// Rows one step takes before further prefill waits for the next step (decode rows always run).
const STEP_ROWS: usize = 512;
/// A prompt waits for a live sequence that is still prefilling a common prefix at least this
/// long, then copies its keys and values instead of computing them again.
const MIN_SHARE: usize = 16;
/// Query rows per attention GEMM of a prefill chunk (a block needs the keys up to its last row only).
const ATT_ROWS: usize = 128;
/// Decoding rows of sequences sharing a prefix per attention task (more read the shared keys
/// fewer times; fewer keep the tasks many enough for the pool).
const GROUP: usize = 4;

/// A sequence in a slot.
struct Live {
    req: usize,
    rng: ChaCha8Rng,
    /// Prompt and sampled tokens; keys and values are known for the first `kv.len`.
    tokens: Vec<u32>,
    prompt_len: usize,
    logprobs: Vec<f32>,
    budget: usize,
    reserve: usize,
    kv: SeqKv,
}

/// Sizes the engine needs.
#[derive(Clone, Copy)]
struct Dims {
    d: usize,
    nh: usize,
    nkv: usize,
    hd: usize,
    eps: f32,
    layers: usize,
}

impl Dims {
    fn qd(&self) -> usize {
        self.nh * self.hd
    }
    fn kd(&self) -> usize {
        self.nkv * self.hd
    }
}

/// Run `f` on a worker thread of rayon's global pool (here, when this is one already).
fn on_pool<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if rayon::current_thread_index().is_some() {
        return f();
    }
    rayon::scope(|_| f())
}

/// `x · Wᵀ (+ bias)` for `rows` rows of `inp` floats, in the weight's representation.
fn apply(lin: &Lin, bias: Option<&Tensor>, x: &[f32], rows: usize, inp: usize) -> Result<Vec<f32>> {
    let mut y = match lin {
        // A few rows (decode steps): our kernel, reading the weight once (see `crate::kernels::skinny`).
        Lin::Dense(w) if rows <= crate::kernels::skinny::MAX_ROWS && crate::kernels::skinny::available() => {
            let out = w.dim(0)?;
            with_f32(&[Some(w)], |sl| Ok(crate::kernels::skinny::matmul(sl[0].expect("weight"), out, inp, x, rows)))?
        }
        // Otherwise few rows: candle's matmul (a BLAS GEMM packs the whole weight per call); many: the BLAS.
        Lin::Dense(w) => {
            let t = Tensor::from_slice(x, (rows, inp), &candle_core::Device::Cpu)?;
            crate::ops::linear(&t, w)?.flatten_all()?.to_vec1::<f32>()?
        }
        Lin::Quant(q) => {
            let t = Tensor::from_slice(x, (rows, inp), &candle_core::Device::Cpu)?;
            q.forward(&t)?.flatten_all()?.to_vec1::<f32>()?
        }
        Lin::Packed(p) => crate::kernels::q8::matmul(&**p, &crate::kernels::q8::quantise_rows(x, rows, inp)),
    };
    add_bias(&mut y, bias)?;
    Ok(y)
}

/// Add `bias` (when there is one) to every row of `y`.
fn add_bias(y: &mut [f32], bias: Option<&Tensor>) -> Result<()> {
    let Some(b) = bias else { return Ok(()) };
    with_f32(&[Some(b)], |sl| {
        let b = sl[0].expect("bias");
        y.chunks_mut(b.len()).for_each(|row| add(row, b));
        Ok(())
    })
}

/// [`apply`] for several weights on the same input: one pass when all are packed tiles (Q8_0 or Q4_1).
fn apply_many(lins: &[(&Lin, Option<&Tensor>)], x: &[f32], rows: usize, inp: usize) -> Result<Vec<Vec<f32>>> {
    let packed: Option<Vec<&dyn crate::kernels::q8::Packed>> =
        lins.iter().map(|(l, _)| if let Lin::Packed(p) = l { Some(&**p) } else { None }).collect();
    let Some(packed) = packed else {
        return lins.iter().map(|(l, b)| apply(l, *b, x, rows, inp)).collect();
    };
    let mut ys = crate::kernels::q8::matmul_many(&packed, &crate::kernels::q8::quantise_rows(x, rows, inp));
    for (y, (_, bias)) in ys.iter_mut().zip(lins) {
        add_bias(y, *bias)?;
    }
    Ok(ys)
}

// The elementwise pieces run in the calling thread: a step's rows are few, and waking the pool
// for each of them made its threads spin against the BLAS's (a sixth of a decode step).

/// RMSNorm of each row of `x` into `out` (as [`crate::blocks::rms_forward`], in this thread).
fn rms(x: &[f32], w: &[f32], eps: f32, out: &mut [f32]) {
    let d = w.len();
    for (o, x) in out.chunks_mut(d).zip(x.chunks(d)) {
        let ms = x.iter().map(|&v| (v as f64) * (v as f64)).sum::<f64>() / d as f64;
        let r = (1.0 / ((ms + eps as f64).sqrt())) as f32;
        for ((o, &x), &w) in o.iter_mut().zip(x).zip(w) {
            *o = x * r * w;
        }
    }
}

fn add(x: &mut [f32], y: &[f32]) {
    x.iter_mut().zip(y).for_each(|(x, y)| *x += y);
}

fn swiglu(g: &[f32], u: &[f32]) -> Vec<f32> {
    g.iter().zip(u).map(|(&g, &u)| g / (1.0 + (-g).exp()) * u).collect()
}

/// Each row's rotary table at its position: `(cos, sin)` of `pos · inv_freq`, `hd / 2` each.
fn rope_tables(pos: &[usize], inv_freq: &[f32]) -> Vec<(Vec<f32>, Vec<f32>)> {
    pos.iter().map(|&p| inv_freq.iter().map(|&f| (p as f32 * f).sin_cos()).map(|(s, c)| (c, s)).unzip()).collect()
}

/// Rotate every head of every row in place (rotate-half layout) with the row's table.
fn rope(x: &mut [f32], heads: usize, hd: usize, tables: &[(Vec<f32>, Vec<f32>)]) {
    let half = hd / 2;
    x.chunks_mut(heads * hd).zip(tables).for_each(|(xr, (cos, sin))| {
        for h in xr.chunks_mut(hd) {
            let (a, b) = h.split_at_mut(half);
            for j in 0..half {
                let (x1, x2) = (a[j], b[j]);
                a[j] = x1 * cos[j] - x2 * sin[j];
                b[j] = x2 * cos[j] + x1 * sin[j];
            }
        }
    });
}

#[inline(always)]
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    tail + acc.iter().sum::<f32>()
}

/// One attention task: query rows `j0..j1` of one sequence (positions `past + j`), the `g`
/// query heads of KV head `kvh`. `q`: the sequence's rows `(n, qd)`; `k`, `v`: that head's
/// cache `(past + n, hd)`. Returns `(j1 − j0, g · hd)`: each row's heads side by side.
#[inline(always)]
fn attend_lanes(q: &[f32], k: &[f32], v: &[f32], (j0, j1, past): (usize, usize, usize), kvh: usize, dm: Dims, scale: f32) -> Vec<f32> {
    let (hd, qd) = (dm.hd, dm.qd());
    let g = dm.nh / dm.nkv;
    let mut out = vec![0f32; (j1 - j0) * g * hd];
    let mut p = vec![0f32; g * (past + j1)];
    for j in j0..j1 {
        let keys = past + j + 1;
        for t in 0..keys {
            let kr = &k[t * hd..(t + 1) * hd];
            for h in 0..g {
                let qo = j * qd + (kvh * g + h) * hd;
                p[h * keys + t] = dot(&q[qo..qo + hd], kr) * scale;
            }
        }
        let o = &mut out[(j - j0) * g * hd..(j - j0 + 1) * g * hd];
        for h in 0..g {
            softmax_in_place(&mut p[h * keys..(h + 1) * keys]);
        }
        for t in 0..keys {
            let vr = &v[t * hd..(t + 1) * hd];
            for h in 0..g {
                let w = p[h * keys + t];
                for (o, &x) in o[h * hd..(h + 1) * hd].iter_mut().zip(vr) {
                    *o += w * x;
                }
            }
        }
    }
    out
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn attend_avx2(q: &[f32], k: &[f32], v: &[f32], rows: (usize, usize, usize), kvh: usize, dm: Dims, scale: f32) -> Vec<f32> {
    attend_lanes(q, k, v, rows, kvh, dm, scale)
}

/// Decoding rows of a group of sequences (see [`crate::kernels::attend`]: every level, the
/// scalar one on its reference, so all give the same bits); another head size, each member alone
/// on [`attend`]. Returns each member's `g · hd` outputs, side by side.
#[allow(clippy::too_many_arguments)]
fn attend_rows<E: Elem>(qs: &[&[f32]], ks: &[&[E]], vs: &[&[E]], keys: &[usize], shared: usize, kvh: usize, dm: Dims, scale: f32) -> Vec<f32> {
    use crate::kernels::{attend, isa};
    if attend::serves(dm.hd) {
        return attend::rows(isa(), qs, ks, vs, keys, shared, kvh, dm.nh / dm.nkv, dm.hd, scale);
    }
    let n = |m: usize| keys[m] * dm.hd;
    (0..qs.len()).flat_map(|m| attend(qs[m], &E::widen(&ks[m][..n(m)]), &E::widen(&vs[m][..n(m)]), (0, 1, keys[m] - 1), kvh, dm, scale)).collect()
}

/// [`attend_rows`] on the members' caches of KV head slot `at` (all f32 or all f16: one
/// representation per call).
#[allow(clippy::too_many_arguments)]
fn attend_cached(qs: &[&[f32]], kvs: &[&SeqKv], at: usize, keys: &[usize], shared: usize, kvh: usize, dm: Dims, scale: f32) -> Vec<f32> {
    fn typed<'a, E>(kvs: &[&'a SeqKv], at: usize, f: impl Fn(&'a Buf) -> Option<&'a [E]>) -> (Vec<&'a [E]>, Vec<&'a [E]>) {
        let get = |b: &'a Buf| f(b).expect("one representation per call");
        (kvs.iter().map(|c| get(&c.k[at])).collect(), kvs.iter().map(|c| get(&c.v[at])).collect())
    }
    match kvs[0].k[at] {
        Buf::F32(_) => {
            let (ks, vs) = typed(kvs, at, |b| if let Buf::F32(x) = b { Some(x.as_slice()) } else { None });
            attend_rows(qs, &ks, &vs, keys, shared, kvh, dm, scale)
        }
        Buf::F16(_) => {
            let (ks, vs) = typed(kvs, at, |b| if let Buf::F16(x) = b { Some(x.as_slice()) } else { None });
            attend_rows(qs, &ks, &vs, keys, shared, kvh, dm, scale)
        }
    }
}

/// [`attend_lanes`] on AVX2 where the CPU has it (no FMA contraction either way).
fn attend(q: &[f32], k: &[f32], v: &[f32], rows: (usize, usize, usize), kvh: usize, dm: Dims, scale: f32) -> Vec<f32> {
    #[cfg(target_arch = "x86_64")]
    if crate::kernels::isa() >= crate::kernels::Isa::Avx2 {
        // SAFETY: the level is only AVX2 where the CPU has it.
        return unsafe { attend_avx2(q, k, v, rows, kvh, dm, scale) };
    }
    attend_lanes(q, k, v, rows, kvh, dm, scale)
}

/// [`attend`] for a block of prefill rows, on two GEMMs per query head: the scores of the rows
/// against the keys up to the last row, a causal softmax, then the values.
fn attend_gemm(q: &[f32], k: &[f32], v: &[f32], (j0, j1, past): (usize, usize, usize), kvh: usize, dm: Dims, scale: f32) -> Vec<f32> {
    let (hd, qd) = (dm.hd, dm.qd());
    let g = dm.nh / dm.nkv;
    let (m, keys) = (j1 - j0, past + j1);
    let mut out = vec![0f32; m * g * hd];
    let mut p = vec![0f32; m * keys];
    for h in 0..g {
        let qo = j0 * qd + (kvh * g + h) * hd;
        gemm((false, true), (m, keys, hd), scale, (&q[qo..], qd), (k, hd), 0.0, (&mut p, keys));
        for (i, row) in p.chunks_mut(keys).enumerate() {
            let seen = past + j0 + i + 1;
            let (a, b) = row.split_at_mut(seen);
            softmax_in_place(a);
            b.fill(0.0);
        }
        gemm((false, false), (m, hd, keys), 1.0, (&p, keys), (v, hd), 0.0, (&mut out[h * hd..], g * hd));
    }
    out
}

impl Model {
    fn engine_dims(&self) -> Dims {
        let c = &self.config;
        Dims {
            d: c.hidden_size,
            nh: c.num_attention_heads,
            nkv: c.num_kv_heads(),
            hd: c.head_dim(),
            eps: c.rms_norm_eps as f32,
            layers: c.num_hidden_layers,
        }
    }

    /// Bytes of keys and values one position takes when generating in `repr` (f16 for the
    /// quantised representations: [`Repr::kv_half`]).
    pub fn kv_bytes_per_token(&self, repr: Repr) -> usize {
        let dm = self.engine_dims();
        2 * dm.layers * dm.kd() * if repr.kv_half() { 2 } else { 4 }
    }

    /// Generate with the engine (see the module docs); `done(n)` is called as sequences finish.
    pub(crate) fn generate_engine(
        &self,
        repr: Repr,
        st: &Stack,
        reqs: &[GenerationRequest],
        params: &SamplingParams,
        done: &mut dyn FnMut(usize),
    ) -> Result<Vec<Generation>> {
        let dm = self.engine_dims();
        let ctx = self.context_length();
        let slots = params.max_batch.max(1);
        let per_token = self.kv_bytes_per_token(repr);
        let max_stop = params.stop.iter().map(|s| s.len()).max().unwrap_or(0);
        if let Some(i) = reqs.iter().position(|r| r.prompt.is_empty()) {
            return Err(Error::Invalid(format!("empty prompt (request {i})")));
        }
        let mut results: Vec<Option<Generation>> = vec![None; reqs.len()];
        let mut waiting: VecDeque<usize> = (0..reqs.len()).collect();
        let mut live: Vec<Live> = Vec::new();
        let mut local = KvStore::default();
        let mut shared = self.kv_store.lock().map_err(|_| Error::Invalid("KV store poisoned by a panic".into()))?;
        let store: &mut KvStore = if self.keep_prefixes { &mut shared } else { &mut local };
        if store.repr != Some(repr) {
            store.clear();
            store.repr = Some(repr);
        }
        let mut stats = EngineStats::default();
        loop {
            // Admit waiting prompts into free slots.
            while live.len() < slots {
                let Some(&i) = waiting.front() else { break };
                let r = &reqs[i];
                let budget = params.max_new_tokens.min(ctx.saturating_sub(r.prompt.len()));
                if budget == 0 {
                    waiting.pop_front();
                    results[i] = Some(self.finish_generation(Vec::new(), Vec::new(), FinishReason::Length, params)?);
                    stats.sequences += 1;
                    stats.prompt_tokens += r.prompt.len();
                    done(1);
                    continue;
                }
                let reserve = (r.prompt.len() + budget) * per_token;
                let reserved: usize = live.iter().map(|l| l.reserve).sum();
                if !live.is_empty() && reserved + reserve > self.kv_budget {
                    stats.kv_waits += 1;
                    break;
                }
                // Keys and values already known for a prefix of the prompt (the last prompt
                // token always runs: its logits give the first sample).
                let limit = r.prompt.len() - 1;
                let from_store = store.best(&r.prompt).map(|(e, n)| (Some(e), None, n.min(limit)));
                let from_live = live
                    .iter()
                    .enumerate()
                    .map(|(j, l)| (None, Some(j), common_prefix(&l.tokens[..l.kv.len], &r.prompt).min(limit)))
                    .max_by_key(|x| x.2);
                let best = [from_store, from_live].into_iter().flatten().max_by_key(|x| x.2).unwrap_or((None, None, 0));
                // A live sequence still prefilling a longer common prefix: wait for it.
                let coming = live.iter().map(|l| common_prefix(&l.tokens[..l.prompt_len], &r.prompt).min(limit)).max().unwrap_or(0);
                if coming >= best.2 + MIN_SHARE {
                    break;
                }
                waiting.pop_front();
                let cap = (r.prompt.len() + budget) * dm.hd;
                let kv = match best {
                    (Some(e), _, n) if n > 0 => {
                        store.clock += 1;
                        store.entries[e].used = store.clock;
                        store.entries[e].kv.share(n, dm.hd, cap, &mut store.tags)
                    }
                    (_, Some(j), n) if n > 0 => live[j].kv.share(n, dm.hd, cap, &mut store.tags),
                    _ => SeqKv::new(dm.layers * dm.nkv, cap, repr.kv_half()),
                };
                stats.sequences += 1;
                stats.prompt_tokens += r.prompt.len();
                stats.reused_tokens += kv.len;
                live.push(Live {
                    req: i,
                    rng: ChaCha8Rng::seed_from_u64(r.seed),
                    tokens: r.prompt.clone(),
                    prompt_len: r.prompt.len(),
                    logprobs: Vec::new(),
                    budget,
                    reserve,
                    kv,
                });
            }
            if live.is_empty() {
                debug_assert!(waiting.is_empty());
                break;
            }
            // This step's rows: one per decoding sequence, a chunk per prefilling one.
            let mut plan: Vec<(usize, usize)> = Vec::new();
            let mut rows = 0;
            for (j, l) in live.iter().enumerate() {
                let pending = l.tokens.len() - l.kv.len;
                let n = pending.min((l.kv.len / CHUNK + 1) * CHUNK - l.kv.len);
                if n > 1 && rows > 0 && rows + n > STEP_ROWS {
                    continue;
                }
                plan.push((j, n));
                rows += n;
            }
            // The step runs on a worker of the pool: its products' parallel loops then start from a
            // worker, which takes its share and lets the others steal, instead of this thread waking a
            // worker and sleeping for each of a step's ~150 products (at one thread, a fifth of a
            // decode step went to those hand-offs).
            // The rows' draws in parallel in the same pass (each from its own sequence's generator,
            // so the same tokens): a vocabulary's exponentials per row, serial on this thread while
            // the pool went idle, then woken again for the next step, cost a sixth of a single-stream
            // step and a fifth of an 8-row one (`examples/decode`, avx2, 2 threads).
            let (logits, draws, rngs) = on_pool(|| -> Result<_> {
                let logits = self.engine_step(st, dm, &mut live, &plan)?;
                let vocab = if logits.0.is_empty() { 0 } else { logits.1.len() / logits.0.len() };
                let mut rngs: Vec<ChaCha8Rng> = logits.0.iter().map(|&j| live[j].rng.clone()).collect();
                let draws: Vec<(u32, f32)> =
                    logits.1.par_chunks(vocab.max(1)).zip(rngs.par_iter_mut()).map(|(row, rng)| sample(row, params, rng)).collect();
                Ok((logits, draws, rngs))
            })?;
            stats.steps += 1;
            stats.computed_tokens += rows;
            // Sample for every sequence whose pending tokens all ran.
            let mut finished: Vec<(usize, FinishReason)> = Vec::new();
            for ((&j, (tok, lp)), rng) in logits.0.iter().zip(draws).zip(rngs) {
                let l = &mut live[j];
                l.rng = rng;
                l.tokens.push(tok);
                l.logprobs.push(lp);
                stats.generated_tokens += 1;
                let generated = &l.tokens[l.prompt_len..];
                let finish = if params.stop_on_eos && self.eos_ids.contains(&tok) {
                    Some(FinishReason::Eos)
                } else if max_stop > 0 && self.hits_stop(generated, &params.stop, max_stop)? {
                    Some(FinishReason::Stop)
                } else if generated.len() >= l.budget {
                    Some(FinishReason::Length)
                } else {
                    None
                };
                if let Some(f) = finish {
                    finished.push((j, f));
                }
            }
            finished.sort_by_key(|&(j, _)| std::cmp::Reverse(j));
            let n_done = finished.len();
            for (j, f) in finished {
                let l = live.swap_remove(j);
                let generated = l.tokens[l.prompt_len..].to_vec();
                results[l.req] = Some(self.finish_generation(generated, l.logprobs, f, params)?);
                let mut tokens = l.tokens;
                tokens.truncate(l.kv.len);
                store.insert(tokens, l.kv);
            }
            let reserved: usize = live.iter().map(|l| l.reserve).sum();
            store.evict_to(self.kv_budget.saturating_sub(reserved));
            if n_done > 0 {
                done(n_done);
            }
        }
        accumulate(&mut shared.stats, &stats);
        results.into_iter().map(|g| g.ok_or_else(|| Error::Invalid("a sequence never finished".into()))).collect()
    }

    /// One forward over the planned rows (`(live index, rows)`): appends their keys and values
    /// to each sequence's cache and returns the live indices that sample, with their logits
    /// `(m, vocab)`.
    fn engine_step(&self, st: &Stack, dm: Dims, live: &mut [Live], plan: &[(usize, usize)]) -> Result<(Vec<usize>, Vec<f32>)> {
        let (d, qd, kd, hd) = (dm.d, dm.qd(), dm.kd(), dm.hd);
        // Row layout: each planned sequence's rows, in plan order.
        let mut ids = Vec::new();
        let mut pos = Vec::new();
        let mut offsets = Vec::with_capacity(plan.len());
        for &(j, n) in plan {
            let l = &live[j];
            offsets.push(ids.len());
            ids.extend_from_slice(&l.tokens[l.kv.len..l.kv.len + n]);
            pos.extend(l.kv.len..l.kv.len + n);
        }
        let r = ids.len();
        // Positions do not change across layers: one rotary table per row for the whole step.
        let tables = rope_tables(&pos, &self.config.inv_freq());
        let mut x = with_f32(&[Some(&st.embed)], |sl| {
            let e = sl[0].expect("embeddings");
            let mut x = Vec::with_capacity(r * d);
            for &t in &ids {
                let t = t as usize;
                if (t + 1) * d > e.len() {
                    return Err(Error::Invalid(format!("token id {t} outside the vocabulary")));
                }
                x.extend_from_slice(&e[t * d..(t + 1) * d]);
            }
            Ok(x)
        })?;
        let scale = 1.0 / (hd as f32).sqrt();
        let mut h = vec![0f32; r * d];
        for (li, layer) in st.layers.iter().enumerate() {
            with_f32(&[Some(&layer.in_norm)], |sl| {
                rms(&x, sl[0].expect("norm"), dm.eps, &mut h);
                Ok(())
            })?;
            let [mut q, mut k, v]: [Vec<f32>; 3] =
                apply_many(&[(&layer.q, layer.q_b.as_ref()), (&layer.k, layer.k_b.as_ref()), (&layer.v, layer.v_b.as_ref())], &h, r, d)?
                    .try_into()
                    .expect("three products");
            rope(&mut q, dm.nh, hd, &tables);
            rope(&mut k, dm.nkv, hd, &tables);
            for (&(j, n), &o) in plan.iter().zip(&offsets) {
                let c = &mut live[j].kv;
                for r in o..o + n {
                    for h in 0..dm.nkv {
                        let at = r * kd + h * hd;
                        c.k[li * dm.nkv + h].push(&k[at..at + hd]);
                        c.v[li * dm.nkv + h].push(&v[at..at + hd]);
                    }
                }
            }
            // Attention: tasks of (sequences, KV head, block of query rows). A prefill block is two
            // GEMMs on the BLAS; decoding rows are tasks of the pool (dot products by hand), the
            // rows of sequences tagged as copies of one another together (their common positions
            // read once), at most GROUP to a task.
            let mut tasks: Vec<(Vec<usize>, usize, usize, usize)> = Vec::new();
            let mut groups: Vec<(Option<u64>, Vec<usize>)> = Vec::new();
            for (p, &(j, n)) in plan.iter().enumerate() {
                if n > 1 {
                    for kvh in 0..dm.nkv {
                        for j0 in (0..n).step_by(ATT_ROWS) {
                            tasks.push((vec![p], kvh, j0, (j0 + ATT_ROWS).min(n)));
                        }
                    }
                    continue;
                }
                let id = live[j].kv.tag.map(|t| t.0);
                match groups.iter_mut().find(|(g, m)| id.is_some() && *g == id && m.len() < GROUP) {
                    Some((_, m)) => m.push(p),
                    None => groups.push((id, vec![p])),
                }
            }
            for (_, members) in groups {
                for kvh in 0..dm.nkv {
                    tasks.push((members.clone(), kvh, 0, 1));
                }
            }
            let live_ro: &[Live] = live;
            let run = |(ps, kvh, j0, j1): &(Vec<usize>, usize, usize, usize)| {
                let (p, kvh) = (ps[0], *kvh);
                let (j, n) = plan[p];
                let c = &live_ro[j].kv;
                let at = li * dm.nkv + kvh;
                if n > 1 {
                    let o = offsets[p];
                    // Keys up to the block's last row (an f16 cache widened for the GEMMs).
                    let upto = (c.len + j1) * hd;
                    return attend_gemm(&q[o * qd..(o + n) * qd], &c.k[at].f32s(upto), &c.v[at].f32s(upto), (*j0, *j1, c.len), kvh, dm, scale);
                }
                let kvs: Vec<&SeqKv> = ps.iter().map(|&p| &live_ro[plan[p].0].kv).collect();
                // Positions every member shares (its tag's length; the whole of a lone row's cache).
                let shared = if ps.len() == 1 { c.len } else { kvs.iter().map(|c| c.tag.map_or(0, |t| t.1)).min().unwrap_or(0) };
                let qs: Vec<&[f32]> = ps.iter().map(|&p| &q[offsets[p] * qd..(offsets[p] + 1) * qd]).collect();
                let keys: Vec<usize> = kvs.iter().map(|c| c.len + 1).collect();
                attend_cached(&qs, &kvs, at, &keys, shared, kvh, dm, scale)
            };
            // Prefill blocks one after another (the BLAS spreads each over the threads), then the
            // decoding rows' tasks over the pool.
            let first_decode = tasks.iter().position(|t| plan[t.0[0]].1 == 1).unwrap_or(tasks.len());
            let mut outs: Vec<Vec<f32>> = tasks[..first_decode].iter().map(run).collect();
            outs.par_extend(tasks[first_decode..].par_iter().map(run));
            let g = dm.nh / dm.nkv;
            let mut y = vec![0f32; r * qd];
            for ((ps, kvh, j0, j1), out) in tasks.iter().zip(&outs) {
                // A block's rows of one sequence, or one row of each member.
                let rows: Vec<usize> =
                    if ps.len() == 1 { (*j0..*j1).map(|jj| offsets[ps[0]] + jj).collect() } else { ps.iter().map(|&p| offsets[p]).collect() };
                for (row, vals) in rows.into_iter().zip(out.chunks(g * hd)) {
                    let at = row * qd + kvh * g * hd;
                    y[at..at + g * hd].copy_from_slice(vals);
                }
            }
            drop(outs);
            let a = apply(&layer.o, layer.o_b.as_ref(), &y, r, qd)?;
            add(&mut x, &a);
            with_f32(&[Some(&layer.post_norm)], |sl| {
                rms(&x, sl[0].expect("norm"), dm.eps, &mut h);
                Ok(())
            })?;
            let [gate, up]: [Vec<f32>; 2] = apply_many(&[(&layer.gate, None), (&layer.up, None)], &h, r, d)?.try_into().expect("two products");
            let f = gate.len() / r;
            let act = swiglu(&gate, &up);
            drop((gate, up));
            let down = apply(&layer.down, None, &act, r, f)?;
            add(&mut x, &down);
        }
        for &(j, n) in plan {
            live[j].kv.len += n;
        }
        // Logits at the last row of every sequence whose pending tokens all ran.
        let mut sampling = Vec::new();
        let mut last = Vec::new();
        for (&(j, n), &o) in plan.iter().zip(&offsets) {
            if live[j].kv.len == live[j].tokens.len() {
                sampling.push(j);
                last.extend_from_slice(&x[(o + n - 1) * d..(o + n) * d]);
            }
        }
        if sampling.is_empty() {
            return Ok((sampling, Vec::new()));
        }
        let m = sampling.len();
        let mut hn = vec![0f32; m * d];
        with_f32(&[Some(&st.norm)], |sl| {
            rms(&last, sl[0].expect("norm"), dm.eps, &mut hn);
            Ok(())
        })?;
        let logits = apply(&st.head, None, &hn, m, d)?;
        Ok((sampling, logits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn random(n: usize, rng: &mut ChaCha8Rng) -> Vec<f32> {
        (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect()
    }

    #[test]
    fn a_group_attends_as_each_member_alone_and_as_the_reference() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for hd in [16, 64, 128] {
            let dm = Dims { d: 0, nh: 6, nkv: 2, hd, eps: 0.0, layers: 1 };
            let scale = 1.0 / (hd as f32).sqrt();
            // Three members copied from one another for 37 positions, then each its own.
            let shared = 37;
            let base_k = random(shared * hd, &mut rng);
            let base_v = random(shared * hd, &mut rng);
            let keys = [40usize, 37, 101];
            let ks: Vec<Vec<f32>> = keys.iter().map(|&n| [base_k.clone(), random((n - shared) * hd, &mut rng)].concat()).collect();
            let vs: Vec<Vec<f32>> = keys.iter().map(|&n| [base_v.clone(), random((n - shared) * hd, &mut rng)].concat()).collect();
            let qs: Vec<Vec<f32>> = (0..3).map(|_| random(dm.qd(), &mut rng)).collect();
            use crate::kernels::attend::{exact, slices as r};
            for kvh in 0..2 {
                let together = attend_rows(&r(&qs), &r(&ks), &r(&vs), &keys, shared, kvh, dm, scale);
                let g = dm.nh / dm.nkv;
                for m in 0..3 {
                    let alone = attend_rows(&r(&qs[m..m + 1]), &r(&ks[m..m + 1]), &r(&vs[m..m + 1]), &keys[m..m + 1], keys[m], kvh, dm, scale);
                    assert_eq!(&together[m * g * hd..(m + 1) * g * hd], &alone[..], "hd {hd}, member {m}: grouped differs from alone");
                    let want = exact(&qs[m], &ks[m], &vs[m], keys[m], kvh, g, hd, scale);
                    for (a, b) in alone.iter().zip(&want) {
                        assert!((a - b).abs() < 1e-5, "hd {hd}, member {m}: {a} vs {b}");
                    }
                }
            }
        }
    }
}
