//! Generation: the engine ([`crate::engine`]; continuous batching, prefix reuse) or the static
//! decoder it replaced (`SPADE_ENGINE=static`), both with temperature / top-p / top-k, stop strings and EOS, max new
//! tokens, one seed per sequence (a sequence's sample never depends on its batch-mates), and the
//! log-prob of every sampled token under the sampling policy.
//!
//! Log-probs are those of `log_softmax(logits / T)` **before** top-p/top-k truncation (DESIGN).
//! Temperature 0 means greedy decoding; its log-probs are then those of `log_softmax(logits)`
//! (T = 1), which is also what [`Model::score`](crate::Model::score) returns for T = 0.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::{Batch, KvCache, Model, Repr};

/// How to sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SamplingParams {
    /// Softmax temperature; 0 = greedy.
    pub temperature: f32,
    /// Nucleus mass kept (1 = off).
    pub top_p: f32,
    /// Keep only the k most likely tokens (0 = off).
    pub top_k: usize,
    /// Upper bound on generated tokens (also bounded by the context length).
    pub max_new_tokens: usize,
    /// Generation of a sequence stops once its text contains one of these.
    pub stop: Vec<String>,
    /// Stop at the model's end-of-sequence / end-of-turn tokens.
    pub stop_on_eos: bool,
    /// Slots: sequences decoding at once (more run faster per token, up to the KV budget); on the
    /// engine a finished sequence's slot goes at once to the next waiting prompt.
    pub max_batch: usize,
}

impl Default for SamplingParams {
    fn default() -> Self {
        SamplingParams { temperature: 1.0, top_p: 1.0, top_k: 0, max_new_tokens: 256, stop: Vec::new(), stop_on_eos: true, max_batch: 32 }
    }
}

/// One prompt to continue, with its own seed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GenerationRequest {
    pub prompt: Vec<u32>,
    pub seed: u64,
}

/// Why a sequence stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FinishReason {
    /// An end-of-sequence token was sampled (it is the last of `tokens`).
    Eos,
    /// A stop string appeared (the token completing it is the last of `tokens`).
    Stop,
    /// `max_new_tokens` or the context length was reached.
    Length,
}

/// A generated continuation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Generation {
    /// Sampled token ids (including a final EOS token, if any).
    pub tokens: Vec<u32>,
    /// Log-prob of each sampled token under `log_softmax(logits / T)`, aligned with `tokens`.
    pub logprobs: Vec<f32>,
    /// Decoded text without the EOS token, cut before a stop string.
    pub text: String,
    pub finish: FinishReason,
}

struct SeqState {
    rng: ChaCha8Rng,
    tokens: Vec<u32>,
    logprobs: Vec<f32>,
    finish: Option<FinishReason>,
    budget: usize,
}

/// Most prompt positions per prefill forward (see `generate_chunk`).
const PREFILL_CHUNK: usize = 512;

/// Bytes of attention scores one prefill forward may hold per layer (batch × heads × chunk ×
/// length × 4); the softmax and the mask each make a copy of that size.
const PREFILL_SCORE_BYTES: usize = 512 << 20;

/// Prompt positions per prefill forward for `batch` prompts of `length` positions with `heads`
/// query heads: at most [`PREFILL_CHUNK`], fewer when the scores would exceed
/// [`PREFILL_SCORE_BYTES`] (a batch of 64 prompts of 3k tokens held ~10 GB of scores at 512), never
/// under 16.
pub(crate) fn prefill_chunk(batch: usize, heads: usize, length: usize) -> usize {
    let per_position = batch.max(1) * heads.max(1) * length.max(1) * 4;
    (PREFILL_SCORE_BYTES / per_position).clamp(16, PREFILL_CHUNK)
}

/// Environment variable choosing the generation path: `engine` (default) or `static` (the
/// fixed-batch decoder the engine replaced, kept as the benches' peer).
pub const ENGINE_ENV: &str = "SPADE_ENGINE";

impl Model {
    /// Generate continuations of many prompts with the model's inference representation (the
    /// embedded [`Generator`](crate::Generator); a server is another, `ServedModel`).
    pub fn generate(&self, requests: &[GenerationRequest], params: &SamplingParams) -> Result<Vec<Generation>> {
        self.generate_with_progress(requests, params, &mut |_| {})
    }

    /// [`Model::generate`], calling `done(n)` as sequences finish.
    pub fn generate_with_progress(
        &self,
        requests: &[GenerationRequest],
        params: &SamplingParams,
        done: &mut dyn FnMut(usize),
    ) -> Result<Vec<Generation>> {
        self.generate_repr_with(self.inference_repr(), requests, params, done)
    }

    /// Generate in a chosen representation (F32 gives log-probs equal to the trainer's).
    pub fn generate_repr(&self, repr: Repr, requests: &[GenerationRequest], params: &SamplingParams) -> Result<Vec<Generation>> {
        self.generate_repr_with(repr, requests, params, &mut |_| {})
    }

    fn generate_repr_with(
        &self,
        repr: Repr,
        requests: &[GenerationRequest],
        params: &SamplingParams,
        done: &mut dyn FnMut(usize),
    ) -> Result<Vec<Generation>> {
        if !(params.temperature >= 0.0) || !(params.top_p > 0.0) {
            return Err(Error::Invalid("temperature must be ≥ 0 and top_p > 0".into()));
        }
        let st = self.stack(repr, false)?;
        let static_path = std::env::var(ENGINE_ENV).is_ok_and(|v| v == "static");
        if !static_path && self.engine_supports(st) {
            return self.generate_engine(repr, st, requests, params, done);
        }
        let out = self.generate_static(repr, requests, params)?;
        done(out.len());
        Ok(out)
    }

    /// The fixed-batch decoder: chunks of `max_batch` prompts, left-padded, decoded until the
    /// slowest finishes, every prompt prefilled in full. The engine's peer in the benches, and the
    /// path of models the engine does not cover (per-head q/k norms, GPUs).
    pub fn generate_static(&self, repr: Repr, requests: &[GenerationRequest], params: &SamplingParams) -> Result<Vec<Generation>> {
        if !(params.temperature >= 0.0) || !(params.top_p > 0.0) {
            return Err(Error::Invalid("temperature must be ≥ 0 and top_p > 0".into()));
        }
        let mut out = Vec::with_capacity(requests.len());
        for chunk in requests.chunks(params.max_batch.max(1)) {
            out.extend(self.generate_chunk(repr, chunk, params)?);
        }
        Ok(out)
    }

    fn generate_chunk(&self, repr: Repr, reqs: &[GenerationRequest], params: &SamplingParams) -> Result<Vec<Generation>> {
        let st = self.stack(repr, false)?;
        let ctx = self.context_length();
        let mut states: Vec<SeqState> = reqs
            .iter()
            .map(|r| SeqState {
                rng: ChaCha8Rng::seed_from_u64(r.seed),
                tokens: Vec::new(),
                logprobs: Vec::new(),
                finish: None,
                budget: params.max_new_tokens.min(ctx.saturating_sub(r.prompt.len())),
            })
            .collect();
        for (s, r) in states.iter_mut().zip(reqs) {
            if r.prompt.is_empty() {
                return Err(Error::Invalid("empty prompt".into()));
            }
            if s.budget == 0 {
                s.finish = Some(FinishReason::Length);
            }
        }
        // Rows still decoding (indices into `reqs`), and their key-validity masks.
        let mut active: Vec<usize> = (0..reqs.len()).filter(|&i| states[i].finish.is_none()).collect();
        if active.is_empty() {
            return states.into_iter().map(|s| self.finish_seq(s, params)).collect();
        }
        let prompts: Vec<Vec<u32>> = active.iter().map(|&i| reqs[i].prompt.clone()).collect();
        let batch = Batch::new(&prompts, self.tokenizer.pad_id(), true, &self.device)?;
        let mut valid: Vec<Vec<u8>> = batch.attention_mask.to_vec2::<u8>()?;
        let longest = states.iter().map(|s| s.budget).max().unwrap_or(0);
        let mut cache = KvCache::with_capacity(self.config.num_hidden_layers, batch.input_ids.dim(1)? + longest);
        // The prompt goes through the f32 weights whatever the representation: f32 GEMM beats
        // candle's quantised matmul on many rows, and it is per-sequence, so batch-independent.
        // Chunked prefill: a few query positions at a time over the growing cache, so the
        // attention scores of a long prompt batch stay near PREFILL_SCORE_BYTES.
        let total = batch.input_ids.dim(1)?;
        let step = prefill_chunk(prompts.len(), self.config.num_attention_heads, total);
        let st32 = self.stack(Repr::F32, false)?;
        let mut start = 0;
        let mut logits = None;
        while start < total {
            let end = (start + step).min(total);
            let ids = batch.input_ids.narrow(1, start, end - start)?;
            let v: Vec<Vec<u8>> = valid.iter().map(|r| r[..end].to_vec()).collect();
            logits = Some(self.run(st32, &ids, &v, Some(&mut cache), true, true)?);
            start = end;
        }
        let mut logits = logits.expect("a prompt has at least one token");
        debug_assert!(!logits.track_op(), "generation must run outside the autograd graph");
        let max_stop = params.stop.iter().map(|s| s.len()).max().unwrap_or(0);
        loop {
            let rows = logits.squeeze(1)?.to_vec2::<f32>()?;
            let mut next = Vec::with_capacity(active.len());
            for (row, &i) in rows.iter().zip(&active) {
                let s = &mut states[i];
                let (tok, lp) = sample(row, params, &mut s.rng);
                s.tokens.push(tok);
                s.logprobs.push(lp);
                if params.stop_on_eos && self.eos_ids.contains(&tok) {
                    s.finish = Some(FinishReason::Eos);
                } else if max_stop > 0 && self.hits_stop(&s.tokens, &params.stop, max_stop)? {
                    s.finish = Some(FinishReason::Stop);
                } else if s.tokens.len() >= s.budget {
                    s.finish = Some(FinishReason::Length);
                }
                next.push(tok);
            }
            let keep: Vec<usize> = (0..active.len()).filter(|&r| states[active[r]].finish.is_none()).collect();
            if keep.is_empty() {
                break;
            }
            if keep.len() < active.len() {
                let rows: Vec<u32> = keep.iter().map(|&r| r as u32).collect();
                cache.select_rows(&rows)?;
                valid = keep.iter().map(|&r| valid[r].clone()).collect();
                next = keep.iter().map(|&r| next[r]).collect();
                active = keep.iter().map(|&r| active[r]).collect();
            }
            for v in valid.iter_mut() {
                v.push(1);
            }
            let n = next.len();
            let input = candle_core::Tensor::from_vec(next, (n, 1), &self.device)?;
            logits = self.run(st, &input, &valid, Some(&mut cache), true, true)?;
        }
        states.into_iter().map(|s| self.finish_seq(s, params)).collect()
    }

    pub(crate) fn hits_stop(&self, tokens: &[u32], stop: &[String], max_stop: usize) -> Result<bool> {
        // A stop string of L bytes spans at most L tokens (each token is ≥ 1 byte).
        let w = (max_stop + 1).min(tokens.len());
        let tail = self.tokenizer.decode(&tokens[tokens.len() - w..], false)?;
        Ok(stop.iter().any(|s| !s.is_empty() && tail.contains(s.as_str())))
    }

    fn finish_seq(&self, s: SeqState, params: &SamplingParams) -> Result<Generation> {
        self.finish_generation(s.tokens, s.logprobs, s.finish.unwrap_or(FinishReason::Length), params)
    }

    /// A generation from its sampled tokens (a final EOS token included when `finish` is Eos):
    /// the text is decoded without the EOS token and cut before a stop string. Every generator
    /// finishes here (the server backend's too).
    pub(crate) fn finish_generation(
        &self,
        tokens: Vec<u32>,
        logprobs: Vec<f32>,
        finish: FinishReason,
        params: &SamplingParams,
    ) -> Result<Generation> {
        let body: &[u32] = if finish == FinishReason::Eos { &tokens[..tokens.len() - 1] } else { &tokens };
        let mut text = self.tokenizer.decode(body, false)?;
        if finish == FinishReason::Stop {
            if let Some(cut) = params.stop.iter().filter(|x| !x.is_empty()).filter_map(|x| text.find(x.as_str())).min() {
                text.truncate(cut);
            }
        }
        Ok(Generation { tokens, logprobs, text, finish })
    }
}

/// Sample one token from a logits row; returns (token, log-prob under log_softmax(logits / T)).
pub(crate) fn sample(logits: &[f32], p: &SamplingParams, rng: &mut ChaCha8Rng) -> (u32, f32) {
    let n = logits.len();
    let m = logits.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    if p.temperature == 0.0 {
        let best = logits.iter().position(|&v| v == m).unwrap_or(0);
        let sum: f64 = logits.iter().map(|&v| ((v - m) as f64).exp()).sum();
        return (best as u32, -(sum.ln() as f32));
    }
    let t = p.temperature;
    // One exponential per entry: unnormalised probabilities and their sum.
    let e: Vec<f32> = logits.iter().map(|&v| ((v - m) / t).exp()).collect();
    let sum: f64 = e.iter().map(|&x| x as f64).sum();
    let log_sum = sum.ln() as f32;
    let u: f64 = rng.random::<f64>();
    let k = if p.top_k == 0 || p.top_k >= n { n } else { p.top_k };
    let idx = if k == n && p.top_p >= 1.0 {
        let target = u * sum;
        let mut acc = 0.0f64;
        let mut chosen = n - 1;
        for (i, &x) in e.iter().enumerate() {
            acc += x as f64;
            if acc > target {
                chosen = i;
                break;
            }
        }
        chosen
    } else {
        // The k (or nucleus) most likely tokens, found by partial selection: O(n) per step.
        let mut order: Vec<u32> = (0..n as u32).collect();
        let desc = |a: &u32, b: &u32| logits[*b as usize].partial_cmp(&logits[*a as usize]).unwrap_or(std::cmp::Ordering::Equal).then(a.cmp(b));
        let mut width = k.min(64);
        let cands: Vec<u32> = loop {
            let w = width.min(k);
            if w < n {
                order.select_nth_unstable_by(w - 1, desc);
            }
            let mut top = order[..w].to_vec();
            top.sort_by(desc);
            let mut cum = 0.0;
            let mut cut = None;
            for (j, &i) in top.iter().enumerate() {
                cum += e[i as usize] as f64 / sum;
                if cum >= p.top_p as f64 {
                    cut = Some(j + 1);
                    break;
                }
            }
            match cut {
                Some(c) => break top[..c].to_vec(),
                None if w == k => break top,
                None => width *= 4,
            }
        };
        let total: f64 = cands.iter().map(|&i| e[i as usize] as f64).sum();
        let target = u * total;
        let mut acc = 0.0;
        let mut chosen = *cands.last().unwrap_or(&0) as usize;
        for &i in &cands {
            acc += e[i as usize] as f64;
            if acc > target {
                chosen = i as usize;
                break;
            }
        }
        chosen
    };
    (idx as u32, (logits[idx] - m) / t - log_sum)
}

/// log Σ exp(x / t), accumulated in f64.
#[cfg(test)]
fn logsumexp(x: &[f32], t: f32) -> f32 {
    let m = x.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b)) / t;
    let s: f64 = x.iter().map(|&v| ((v / t - m) as f64).exp()).sum();
    m + s.ln() as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefill_chunks_shrink_with_batch_and_length() {
        // SmolLM2-135M (9 heads): one 3k-token prompt keeps the full chunk...
        assert_eq!(prefill_chunk(1, 9, 3000), PREFILL_CHUNK);
        // ...64 of them take fewer positions at a time, bounding the scores.
        let c = prefill_chunk(64, 9, 3000);
        assert!(c < 100 && 64 * 9 * c * 3000 * 4 <= PREFILL_SCORE_BYTES, "{c}");
        assert_eq!(prefill_chunk(1024, 32, 32_768), 16);
    }

    #[test]
    fn top_k_and_top_p_truncate() {
        let logits = vec![3.0, 2.0, 1.0, 0.0, -1.0];
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let p = SamplingParams { top_k: 2, ..Default::default() };
        for _ in 0..200 {
            let (t, lp) = sample(&logits, &p, &mut rng);
            assert!(t < 2);
            // Log-prob before truncation.
            let full = logits[t as usize] - logsumexp(&logits, 1.0);
            assert!((lp - full).abs() < 1e-6);
        }
        let p = SamplingParams { top_p: 0.5, ..Default::default() };
        for _ in 0..200 {
            assert_eq!(sample(&logits, &p, &mut rng).0, 0);
        }
        let greedy = SamplingParams { temperature: 0.0, ..Default::default() };
        assert_eq!(sample(&logits, &greedy, &mut rng).0, 0);
        // Unrestricted sampling visits several tokens with roughly the right frequency.
        let p = SamplingParams::default();
        let mut counts = [0usize; 5];
        for _ in 0..4000 {
            counts[sample(&logits, &p, &mut rng).0 as usize] += 1;
        }
        let p0 = (3.0f64).exp() / logits.iter().map(|&v| (v as f64).exp()).sum::<f64>();
        assert!(((counts[0] as f64 / 4000.0) - p0).abs() < 0.03, "{counts:?}");
    }
}
