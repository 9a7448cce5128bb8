//! The model: config, one weight set, tokenizer and chat template, and the forward pass.
//!
//! The forward is built only from differentiable ops (rotary by narrow/cat, grouped-query
//! attention by reshaping queries per KV head; RMSNorm and the masked attention softmax as fused
//! CPU kernels with their own backward, `crate::ops`), so the trainer differentiates the same
//! function that generation runs (generation swaps in candle's inference-only kernels).
//! Generation may use a faster representation of the same weights ([`Repr::Q8_0`], [`Repr::Q4_1`]:
//! matmul weights quantised from the f32 ones); training always uses f32.

use std::sync::Arc;

use candle_core::quantized::{GgmlDType, QMatMul, QTensor};
use candle_core::{DType, Device, Module, Tensor, D};

use crate::chat::{ChatTemplate, Message};
use crate::config::ModelConfig;
use crate::error::{Error, Result};
use crate::tokenizer::Tokenizer;
use crate::weights::{layer_name, Weights};

pub use crate::repr::Repr;

#[derive(Clone)]
pub(crate) enum Lin {
    Dense(Tensor),
    Quant(Arc<QMatMul>),
    /// Q8_0 or Q4_1 in the tiles of our kernels ([`crate::kernels::q8`], [`crate::kernels::q4`]),
    /// where they are built (x86-64, aarch64).
    Packed(Arc<dyn crate::kernels::q8::Packed>),
}

impl Lin {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        match self {
            Lin::Dense(w) => {
                let dims = x.dims().to_vec();
                let inner = dims[dims.len() - 1];
                let rows = x.elem_count() / inner;
                let y = crate::ops::linear(&x.reshape((rows, inner))?, w)?;
                let mut out = dims;
                let last = out.len() - 1;
                out[last] = w.dim(0)?;
                Ok(y.reshape(out)?)
            }
            Lin::Quant(q) => Ok(q.forward(x)?),
            Lin::Packed(p) => {
                let mut dims = x.dims().to_vec();
                let k = p.cols();
                let rows = x.elem_count() / k;
                let xs = x.flatten_all()?.to_vec1::<f32>()?;
                let y = crate::kernels::q8::matmul(&**p, &crate::kernels::q8::quantise_rows(&xs, rows, k));
                *dims.last_mut().expect("a matrix") = p.rows();
                Ok(Tensor::from_vec(y, dims, x.device())?)
            }
        }
    }

    fn build(w: &Tensor, repr: Repr) -> Result<Lin> {
        match repr {
            Repr::F32 => Ok(Lin::Dense(w.clone())),
            Repr::Q8_0 | Repr::Q4_1 => {
                if w.dim(1)? % 32 != 0 {
                    return Ok(Lin::Dense(w.detach()));
                }
                if crate::kernels::q8::available() && w.device().is_cpu() {
                    let (n, k) = w.dims2()?;
                    let ws = w.detach().flatten_all()?.to_vec1::<f32>()?;
                    return Ok(Lin::Packed(if repr == Repr::Q4_1 {
                        Arc::new(crate::kernels::q4::PackedQ4::new(&ws, n, k))
                    } else {
                        Arc::new(crate::kernels::q8::PackedQ8::new(&ws, n, k))
                    }));
                }
                let dtype = if repr == Repr::Q4_1 { GgmlDType::Q4_1 } else { GgmlDType::Q8_0 };
                let q = QTensor::quantize(&w.detach(), dtype)?;
                Ok(Lin::Quant(Arc::new(QMatMul::from_qtensor(q)?)))
            }
        }
    }
}

#[derive(Clone)]
pub(crate) struct Layer {
    pub(crate) in_norm: Tensor,
    pub(crate) q: Lin,
    pub(crate) k: Lin,
    pub(crate) v: Lin,
    pub(crate) o: Lin,
    pub(crate) q_b: Option<Tensor>,
    pub(crate) k_b: Option<Tensor>,
    pub(crate) v_b: Option<Tensor>,
    pub(crate) o_b: Option<Tensor>,
    pub(crate) q_norm: Option<Tensor>,
    pub(crate) k_norm: Option<Tensor>,
    pub(crate) post_norm: Tensor,
    pub(crate) gate: Lin,
    pub(crate) up: Lin,
    pub(crate) down: Lin,
}

/// The layers in one representation.
/// What every block of one forward shares: rotary tables and the additive mask.
pub(crate) struct Ctx {
    cos: Tensor,
    sin: Tensor,
    mask: Option<Tensor>,
}

#[derive(Clone)]
pub(crate) struct Stack {
    pub(crate) embed: Tensor,
    pub(crate) layers: Vec<Layer>,
    pub(crate) norm: Tensor,
    pub(crate) head: Lin,
}

impl Stack {
    /// The weights in one representation. `grad`: the trainable `Var`s themselves; otherwise
    /// detached views of the same storage (in-place updates show), which inference runs on: a
    /// forward over `Var`s records every intermediate for a backward that never comes, so a
    /// layer's activations (attention scores included) lived until the forward ended — a batched
    /// prefill of 64 prompts grew to ~24 GB on the default model.
    fn build(cfg: &ModelConfig, w: &Weights, repr: Repr, grad: bool) -> Result<Stack> {
        let take = |t: Tensor| if grad { t } else { t.detach() };
        let get = |name: &str| w.get(name).map(take);
        let mut layers = Vec::with_capacity(cfg.num_hidden_layers);
        for i in 0..cfg.num_hidden_layers {
            let g = |s: &str| get(&layer_name(i, s));
            let o = |s: &str| w.get_opt(&layer_name(i, s)).map(take);
            layers.push(Layer {
                in_norm: g("input_layernorm.weight")?,
                q: Lin::build(&g("self_attn.q_proj.weight")?, repr)?,
                k: Lin::build(&g("self_attn.k_proj.weight")?, repr)?,
                v: Lin::build(&g("self_attn.v_proj.weight")?, repr)?,
                o: Lin::build(&g("self_attn.o_proj.weight")?, repr)?,
                q_b: o("self_attn.q_proj.bias"),
                k_b: o("self_attn.k_proj.bias"),
                v_b: o("self_attn.v_proj.bias"),
                o_b: o("self_attn.o_proj.bias"),
                q_norm: o("self_attn.q_norm.weight"),
                k_norm: o("self_attn.k_norm.weight"),
                post_norm: g("post_attention_layernorm.weight")?,
                gate: Lin::build(&g("mlp.gate_proj.weight")?, repr)?,
                up: Lin::build(&g("mlp.up_proj.weight")?, repr)?,
                down: Lin::build(&g("mlp.down_proj.weight")?, repr)?,
            });
        }
        let embed = get("model.embed_tokens.weight")?;
        // The output head stays in 8 bits under Q4_1, as the model's GGUF files keep it.
        let head_repr = if repr == Repr::Q4_1 { Repr::Q8_0 } else { repr };
        let head = match w.get_opt("lm_head.weight").map(take) {
            Some(h) => Lin::build(&h, head_repr)?,
            None => Lin::build(&embed, head_repr)?,
        };
        Ok(Stack { embed, layers, norm: get("model.norm.weight")?, head })
    }
}

/// Per-layer key/value cache of a batch: buffers `(batch, kv_heads, capacity, head_dim)` written
/// in place (no copy of the past per step), of which the first `len` positions are used.
#[derive(Clone, Default)]
pub struct KvCache {
    layers: Vec<Option<LayerKv>>,
    capacity: usize,
}

#[derive(Clone)]
struct LayerKv {
    k: Tensor,
    v: Tensor,
    len: usize,
}

impl LayerKv {
    /// Append `(b, h, s, d)` keys and values; returns views of everything cached so far.
    fn append(&mut self, k: &Tensor, v: &Tensor, min_cap: usize) -> Result<(Tensor, Tensor)> {
        let s = k.dim(2)?;
        let cap = self.k.dim(2)?;
        if self.len + s > cap {
            let new_cap = (self.len + s).max(2 * cap).max(min_cap);
            let grow = |t: &Tensor| -> Result<Tensor> {
                let (b, h, _, d) = t.dims4()?;
                let extra = Tensor::zeros((b, h, new_cap - cap, d), t.dtype(), t.device())?;
                Ok(Tensor::cat(&[t, &extra], 2)?)
            };
            self.k = grow(&self.k)?;
            self.v = grow(&self.v)?;
        }
        self.k.slice_set(&k.contiguous()?, 2, self.len)?;
        self.v.slice_set(&v.contiguous()?, 2, self.len)?;
        self.len += s;
        Ok((self.k.narrow(2, 0, self.len)?, self.v.narrow(2, 0, self.len)?))
    }
}

impl KvCache {
    pub fn new(num_layers: usize) -> Self {
        Self::with_capacity(num_layers, 0)
    }

    /// A cache that allocates room for `capacity` positions on first use (grows if needed).
    pub fn with_capacity(num_layers: usize, capacity: usize) -> Self {
        KvCache { layers: vec![None; num_layers], capacity }
    }

    /// Cached positions (including padding).
    pub fn len(&self) -> usize {
        self.layers.first().and_then(|l| l.as_ref()).map(|l| l.len).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keep only the given batch rows (in that order).
    pub fn select_rows(&mut self, rows: &[u32]) -> Result<()> {
        for l in self.layers.iter_mut().flatten() {
            let idx = Tensor::new(rows, l.k.device())?;
            l.k = l.k.index_select(&idx, 0)?;
            l.v = l.v.index_select(&idx, 0)?;
        }
        Ok(())
    }

    /// Append a layer's new keys and values (generation only: not differentiable).
    fn append(&mut self, layer: usize, k: &Tensor, v: &Tensor) -> Result<(Tensor, Tensor)> {
        let cap = self.capacity;
        match &mut self.layers[layer] {
            Some(l) => l.append(k, v, cap),
            slot @ None => {
                let (b, h, s, d) = k.dims4()?;
                let c = cap.max(s);
                let mut l = LayerKv {
                    k: Tensor::zeros((b, h, c, d), k.dtype(), k.device())?,
                    v: Tensor::zeros((b, h, c, d), v.dtype(), v.device())?,
                    len: 0,
                };
                let out = l.append(k, v, cap)?;
                *slot = Some(l);
                Ok(out)
            }
        }
    }
}

/// Right- or left-padded batch inputs built from token sequences of different lengths.
#[derive(Debug, Clone)]
pub struct Batch {
    /// `(batch, seq)` u32 token ids.
    pub input_ids: Tensor,
    /// `(batch, seq)` u8: 1 for real tokens, 0 for padding.
    pub attention_mask: Tensor,
    /// Lengths of the sequences.
    pub lengths: Vec<usize>,
    /// Whether padding is on the left.
    pub left: bool,
}

impl Batch {
    /// Pad sequences to one length (`left` = pad at the start, as generation does).
    pub fn new(seqs: &[Vec<u32>], pad_id: u32, left: bool, device: &Device) -> Result<Self> {
        let b = seqs.len();
        let s = seqs.iter().map(Vec::len).max().unwrap_or(0);
        if b == 0 || s == 0 {
            return Err(Error::Invalid("empty batch or empty sequence".into()));
        }
        let mut ids = vec![pad_id; b * s];
        let mut mask = vec![0u8; b * s];
        for (i, seq) in seqs.iter().enumerate() {
            let off = if left { s - seq.len() } else { 0 };
            for (j, &t) in seq.iter().enumerate() {
                ids[i * s + off + j] = t;
                mask[i * s + off + j] = 1;
            }
        }
        Ok(Batch {
            input_ids: Tensor::from_vec(ids, (b, s), device)?,
            attention_mask: Tensor::from_vec(mask, (b, s), device)?,
            lengths: seqs.iter().map(Vec::len).collect(),
            left,
        })
    }
}

/// A loaded model: config, weights (f32 `Var`s), tokenizer, chat template and the inference
/// representation used by generation.
#[derive(Clone)]
pub struct Model {
    pub(crate) config: ModelConfig,
    pub(crate) weights: Weights,
    pub(crate) tokenizer: Tokenizer,
    pub(crate) chat: ChatTemplate,
    pub(crate) device: Device,
    pub(crate) eos_ids: Vec<u32>,
    /// The f32 weights as `Var`s: the trainer's forward.
    dense: Stack,
    /// The same storage outside the graph: f32 inference (generation, scoring without gradient).
    frozen: Stack,
    fast: Option<(Repr, Stack)>,
    /// Keys and values of finished sequences, for prompts that extend them (the engine's).
    pub(crate) kv_store: Arc<std::sync::Mutex<crate::kv::KvStore>>,
    /// Whether `kv_store` keeps entries across generate calls ([`Model::set_prefix_cache`]).
    pub(crate) keep_prefixes: bool,
    /// Bytes of keys and values the engine may hold ([`Model::set_kv_budget`]).
    pub(crate) kv_budget: usize,
    inv_freq: Tensor,
    /// Extra metadata: where the model was loaded from.
    pub(crate) source: String,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("source", &self.source)
            .field("model_type", &self.config.model_type)
            .field("params", &self.weights.num_params())
            .field("inference_repr", &self.inference_repr())
            .field("device", &self.device)
            .finish()
    }
}

const MASKED: f32 = -1e30;

/// The engine's default KV budget: 4 GiB.
pub const DEFAULT_KV_BUDGET: usize = 4 << 30;

impl Model {
    /// Assemble a model from its parts. `eos_ids` are the ids that end generation.
    pub fn new(
        config: ModelConfig,
        weights: Weights,
        tokenizer: Tokenizer,
        chat: ChatTemplate,
        eos_ids: Vec<u32>,
        device: Device,
        source: String,
    ) -> Result<Self> {
        config.validate()?;
        let dense = Stack::build(&config, &weights, Repr::F32, true)?;
        let frozen = Stack::build(&config, &weights, Repr::F32, false)?;
        let inv = config.inv_freq();
        let n = inv.len();
        let inv_freq = Tensor::from_vec(inv, (1, 1, n), &device)?;
        let mut eos_ids = eos_ids;
        eos_ids.sort_unstable();
        eos_ids.dedup();
        Ok(Model {
            config,
            weights,
            tokenizer,
            chat,
            device,
            eos_ids,
            dense,
            frozen,
            fast: None,
            kv_store: Default::default(),
            keep_prefixes: false,
            kv_budget: DEFAULT_KV_BUDGET,
            inv_freq,
            source,
        })
    }

    pub fn config(&self) -> &ModelConfig {
        &self.config
    }
    pub fn weights(&self) -> &Weights {
        &self.weights
    }
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }
    pub fn chat_template(&self) -> &ChatTemplate {
        &self.chat
    }
    pub fn device(&self) -> &Device {
        &self.device
    }
    /// Ids that end a generation (config, tokenizer and template end-of-turn tokens).
    pub fn eos_ids(&self) -> &[u32] {
        &self.eos_ids
    }
    /// Replace the ids that end a generation.
    pub fn set_eos_ids(&mut self, ids: Vec<u32>) {
        self.eos_ids = ids;
        self.eos_ids.sort_unstable();
        self.eos_ids.dedup();
    }
    /// The context length (prompt + completion tokens).
    pub fn context_length(&self) -> usize {
        self.config.context_length()
    }
    /// Where the model was loaded from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The representation generation uses.
    pub fn inference_repr(&self) -> Repr {
        self.fast.as_ref().map(|(r, _)| *r).unwrap_or(Repr::F32)
    }

    /// Keep finished sequences' keys and values across generate calls, so a prompt extending an
    /// earlier prompt and its completion (an episode's next turn) prefills only its new tokens.
    /// Only for a model whose weights no longer change: a training step makes the kept values
    /// stale (call [`Model::clear_prefix_cache`] after one). Off by default; the generating
    /// stages turn it on.
    pub fn set_prefix_cache(&mut self, on: bool) {
        self.keep_prefixes = on;
        self.clear_prefix_cache();
    }

    /// Forget every kept key and value.
    pub fn clear_prefix_cache(&self) {
        if let Ok(mut s) = self.kv_store.lock() {
            s.clear();
        }
    }

    /// Bytes of keys and values the engine may hold (live sequences and kept prefixes); a prompt
    /// that would exceed it waits for a slot's sequence to finish.
    pub fn set_kv_budget(&mut self, bytes: usize) {
        self.kv_budget = bytes;
    }

    /// Whether the engine can run this stack: CPU, no per-head q/k norms.
    pub(crate) fn engine_supports(&self, st: &Stack) -> bool {
        self.device.is_cpu() && st.layers.iter().all(|l| l.q_norm.is_none() && l.k_norm.is_none())
    }

    /// The engine's counters, summed over this model's generate calls.
    pub fn engine_stats(&self) -> crate::kv::EngineStats {
        self.kv_store.lock().map(|s| s.stats).unwrap_or_default()
    }

    /// Choose the representation generation uses; Q8_0 quantises the current f32 weights.
    /// After the weights change (a training step), call it again to refresh the copy.
    pub fn set_inference_repr(&mut self, repr: Repr) -> Result<()> {
        self.clear_prefix_cache();
        self.fast = match repr {
            Repr::F32 => None,
            r => Some((r, Stack::build(&self.config, &self.weights, r, false)?)),
        };
        Ok(())
    }

    /// The weights for a forward: `grad` = the trainable `Var`s (f32 only), otherwise
    /// weights outside the autograd graph, whose forward frees activations as it goes.
    pub(crate) fn stack(&self, repr: Repr, grad: bool) -> Result<&Stack> {
        match (repr, &self.fast) {
            (Repr::F32, _) if grad => Ok(&self.dense),
            (Repr::F32, _) => Ok(&self.frozen),
            (r, _) if grad => Err(Error::Invalid(format!("representation {r} has no gradient; train in f32"))),
            (r, Some((fr, s))) if *fr == r => Ok(s),
            (r, _) => Err(Error::Invalid(format!("representation {r} not built; call set_inference_repr first"))),
        }
    }

    /// Render a chat with the model's template.
    pub fn render_chat(&self, messages: &[Message], add_generation_prompt: bool) -> Result<String> {
        self.chat.render(messages, add_generation_prompt)
    }

    /// Render and tokenize a chat (no extra special tokens: the template writes them). The
    /// messages' contents are data: a special-token string in them is plain text, never a turn
    /// boundary ([`Tokenizer::hide_special`]).
    pub fn encode_chat(&self, messages: &[Message], add_generation_prompt: bool) -> Result<Vec<u32>> {
        let hidden: Vec<Message> = messages.iter().map(|m| Message::new(m.role.clone(), self.tokenizer.hide_special(&m.content))).collect();
        let text = self.render_chat(&hidden, add_generation_prompt)?;
        self.tokenizer.encode(&text, false)
    }

    /// Trainable forward over the f32 weights: logits `(batch, seq, vocab)` for every position.
    /// `attention_mask` `(batch, seq)` (1 = token, 0 = padding; left or right padding) may be
    /// omitted when no sequence is padded.
    pub fn forward(&self, input_ids: &Tensor, attention_mask: Option<&Tensor>) -> Result<Tensor> {
        self.forward_repr(Repr::F32, input_ids, attention_mask)
    }

    /// [`Model::forward`] in a chosen representation.
    pub fn forward_repr(&self, repr: Repr, input_ids: &Tensor, attention_mask: Option<&Tensor>) -> Result<Tensor> {
        let (b, s) = input_ids.dims2()?;
        let valid: Vec<Vec<u8>> = match attention_mask {
            Some(m) => m.to_dtype(DType::U8)?.to_vec2::<u8>()?,
            None => vec![vec![1u8; s]; b],
        };
        self.run(self.stack(repr, repr == Repr::F32)?, input_ids, &valid, None, false, false)
    }

    /// The core forward. `valid[b][j]` tells whether key position j (over cache + new tokens)
    /// is a real token. With `last_only` only the last position's logits are computed,
    /// `(batch, 1, vocab)`. `fused` swaps in candle's fused kernels for RMSNorm, rotary and
    /// softmax (same math, no backward): generation only.
    pub(crate) fn run(
        &self,
        st: &Stack,
        input_ids: &Tensor,
        valid: &[Vec<u8>],
        cache: Option<&mut KvCache>,
        last_only: bool,
        fused: bool,
    ) -> Result<Tensor> {
        let (_, s) = input_ids.dims2()?;
        let past = valid.first().map(Vec::len).unwrap_or(0) - s;
        if let Some(c) = cache.as_deref() {
            if c.len() != past {
                return Err(Error::Invalid(format!("cache holds {} positions, expected {past}", c.len())));
            }
        }
        let x = self.run_hidden(st, input_ids, valid, cache, fused)?;
        let x = if last_only { x.narrow(1, s - 1, 1)? } else { x };
        self.head(st, &x, fused)
    }

    /// [`Model::run`] up to the last block's output `(batch, seq, hidden)`, before the head.
    pub(crate) fn run_hidden(
        &self,
        st: &Stack,
        input_ids: &Tensor,
        valid: &[Vec<u8>],
        mut cache: Option<&mut KvCache>,
        fused: bool,
    ) -> Result<Tensor> {
        let ctx = self.prepare(input_ids, valid, fused)?;
        let mut x = self.embed(st, input_ids)?;
        for (li, layer) in st.layers.iter().enumerate() {
            let kv = cache.as_deref_mut().map(|c| (c, li));
            x = self.block(layer, &x, &ctx, kv, fused)?;
        }
        Ok(x)
    }

    /// Rotary tables and the additive mask of a forward over `input_ids` (after `past` cached
    /// positions, `valid` covering cache + new tokens).
    pub(crate) fn prepare(&self, input_ids: &Tensor, valid: &[Vec<u8>], fused: bool) -> Result<Ctx> {
        let (b, s) = input_ids.dims2()?;
        let kv_len = valid.first().map(Vec::len).unwrap_or(0);
        let past = kv_len - s;
        // Positions: the number of real tokens before each one (padding does not count).
        let mut pos = vec![0f32; b * s];
        let mut any_pad = false;
        for (i, row) in valid.iter().enumerate() {
            let mut n = 0usize;
            for (j, &v) in row.iter().enumerate() {
                if j >= past {
                    pos[i * s + j - past] = n as f32;
                }
                if v != 0 {
                    n += 1;
                } else {
                    any_pad = true;
                }
            }
        }
        let dev = &self.device;
        let pos = Tensor::from_vec(pos, (b, s, 1), dev)?;
        let freqs = pos.broadcast_mul(&self.inv_freq)?; // (b, s, hd/2)
        let (cos, sin) = if fused {
            (freqs.cos()?, freqs.sin()?)
        } else {
            let emb = Tensor::cat(&[&freqs, &freqs], D::Minus1)?;
            (emb.cos()?.unsqueeze(1)?, emb.sin()?.unsqueeze(1)?) // (b, 1, s, hd)
        };
        // Additive mask (b, 1, s, kv): causal + padded keys. A fully masked row (a padding
        // query) gets a uniform distribution instead of NaN.
        let mask = if s == 1 && !any_pad {
            None
        } else {
            let mut m = vec![0f32; b * s * kv_len];
            for (i, row) in valid.iter().enumerate() {
                for q in 0..s {
                    let qa = past + q;
                    let base = (i * s + q) * kv_len;
                    for (j, &v) in row.iter().enumerate() {
                        if j > qa || v == 0 {
                            m[base + j] = MASKED;
                        }
                    }
                }
            }
            Some(Tensor::from_vec(m, (b, 1, s, kv_len), dev)?)
        };
        Ok(Ctx { cos, sin, mask })
    }

    fn norm(&self, x: &Tensor, w: &Tensor, fused: bool) -> Result<Tensor> {
        if fused {
            Ok(candle_nn::ops::rms_norm(&x.contiguous()?, w, self.config.rms_norm_eps as f32)?)
        } else {
            crate::ops::rms_norm(x, w, self.config.rms_norm_eps)
        }
    }

    /// Token embeddings `(b, s, hidden)`.
    pub(crate) fn embed(&self, st: &Stack, input_ids: &Tensor) -> Result<Tensor> {
        let (b, s) = input_ids.dims2()?;
        Ok(st.embed.index_select(&input_ids.flatten_all()?, 0)?.reshape((b, s, ()))?)
    }

    /// One transformer block.
    pub(crate) fn block(&self, layer: &Layer, x: &Tensor, ctx: &Ctx, kv: Option<(&mut KvCache, usize)>, fused: bool) -> Result<Tensor> {
        let h = self.norm(x, &layer.in_norm, fused)?;
        let a = self.attention(layer, &h, &ctx.cos, &ctx.sin, ctx.mask.as_ref(), kv, fused)?;
        let x = (x + a)?;
        let h = self.norm(&x, &layer.post_norm, fused)?;
        let a = crate::ops::swiglu(&layer.gate.forward(&h)?, &layer.up.forward(&h)?)?;
        Ok((&x + layer.down.forward(&a)?)?)
    }

    /// Final norm and the LM head: logits.
    pub(crate) fn head(&self, st: &Stack, x: &Tensor, fused: bool) -> Result<Tensor> {
        let x = self.norm(x, &st.norm, fused)?;
        st.head.forward(&x)
    }

    #[allow(clippy::too_many_arguments)]
    fn attention(
        &self,
        l: &Layer,
        x: &Tensor,
        cos: &Tensor,
        sin: &Tensor,
        mask: Option<&Tensor>,
        cache: Option<(&mut KvCache, usize)>,
        fused: bool,
    ) -> Result<Tensor> {
        let cfg = &self.config;
        let (b, s, _) = x.dims3()?;
        let (nh, nkv, hd) = (cfg.num_attention_heads, cfg.num_kv_heads(), cfg.head_dim());
        let proj = |lin: &Lin, bias: &Option<Tensor>, heads: usize| -> Result<Tensor> {
            let mut y = lin.forward(x)?;
            if let Some(bb) = bias {
                y = y.broadcast_add(bb)?;
            }
            Ok(y.reshape((b, s, heads, hd))?)
        };
        let mut q = proj(&l.q, &l.q_b, nh)?;
        let mut k = proj(&l.k, &l.k_b, nkv)?;
        let v = proj(&l.v, &l.v_b, nkv)?.transpose(1, 2)?.contiguous()?;
        if let (Some(qn), Some(kn)) = (&l.q_norm, &l.k_norm) {
            if fused {
                q = candle_nn::ops::rms_norm(&q.contiguous()?, qn, cfg.rms_norm_eps as f32)?;
                k = candle_nn::ops::rms_norm(&k.contiguous()?, kn, cfg.rms_norm_eps as f32)?;
            } else {
                q = crate::ops::rms_norm(&q, qn, cfg.rms_norm_eps)?;
                k = crate::ops::rms_norm(&k, kn, cfg.rms_norm_eps)?;
            }
        }
        let rot = |t: Tensor| -> Result<Tensor> {
            let t = t.transpose(1, 2)?.contiguous()?;
            if fused {
                Ok(candle_nn::rotary_emb::rope(&t, cos, sin)?)
            } else {
                rope(&t, cos, sin)
            }
        };
        let q = rot(q)?;
        let k = rot(k)?;
        let (k, v) = match cache {
            Some((c, li)) => c.append(li, &k, &v)?,
            None => (k, v),
        };
        let kv_len = k.dim(2)?;
        let g = nh / nkv;
        let scale = 1.0 / (hd as f64).sqrt();
        // Grouped-query attention without copying K/V: fold the query heads of one KV head
        // into the row dimension.
        let q = (q * scale)?.reshape((b, nkv, g * s, hd))?;
        let att = q.matmul(&k.t()?)?.reshape((b, nh, s, kv_len))?;
        let att = if fused {
            let att = match mask {
                Some(m) => att.broadcast_add(m)?,
                None => att,
            };
            candle_nn::ops::softmax_last_dim(&att)?
        } else {
            crate::ops::masked_softmax(&att, mask)?
        };
        let y = att.reshape((b, nkv, g * s, kv_len))?.matmul(&v)?;
        let y = y.reshape((b, nh, s, hd))?.transpose(1, 2)?.reshape((b, s, nh * hd))?;
        let mut o = l.o.forward(&y)?;
        if let Some(ob) = &l.o_b {
            o = o.broadcast_add(ob)?;
        }
        Ok(o)
    }
}

/// Rotary embedding in the Hugging Face (rotate-half) layout. `x`: (b, heads, s, hd);
/// `cos`, `sin`: (b, 1, s, hd).
pub(crate) fn rope(x: &Tensor, cos: &Tensor, sin: &Tensor) -> Result<Tensor> {
    let hd = x.dim(D::Minus1)?;
    let x1 = x.narrow(D::Minus1, 0, hd / 2)?;
    let x2 = x.narrow(D::Minus1, hd / 2, hd / 2)?;
    let rot = Tensor::cat(&[&x2.neg()?, &x1], D::Minus1)?;
    Ok((x.broadcast_mul(cos)? + rot.broadcast_mul(sin)?)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kv_cache_grows_and_equals_concatenation() {
        let dev = Device::Cpu;
        let mut c = KvCache::with_capacity(1, 2);
        let mut all_k = Vec::new();
        for step in 0..5 {
            let s = if step == 0 { 3 } else { 1 };
            let k = Tensor::rand(0f32, 1., (2, 3, s, 4), &dev).unwrap();
            let v = (&k * 2.0).unwrap();
            all_k.push(k.clone());
            let (ck, cv) = c.append(0, &k, &v).unwrap();
            let want = Tensor::cat(&all_k, 2).unwrap();
            let d = (ck - &want).unwrap().abs().unwrap().sum_all().unwrap().to_scalar::<f32>().unwrap();
            assert_eq!(d, 0.0);
            let d = (cv - (want * 2.0).unwrap()).unwrap().abs().unwrap().sum_all().unwrap().to_scalar::<f32>().unwrap();
            assert_eq!(d, 0.0);
        }
        assert_eq!(c.len(), 7);
        c.select_rows(&[1]).unwrap();
        let (ck, _) =
            c.append(0, &Tensor::zeros((1, 3, 1, 4), DType::F32, &dev).unwrap(), &Tensor::zeros((1, 3, 1, 4), DType::F32, &dev).unwrap()).unwrap();
        let want = Tensor::cat(&all_k, 2).unwrap().get(1).unwrap();
        let d = (ck.get(0).unwrap().narrow(1, 0, 7).unwrap() - want).unwrap().abs().unwrap().sum_all().unwrap().to_scalar::<f32>().unwrap();
        assert_eq!(d, 0.0);
    }
}
