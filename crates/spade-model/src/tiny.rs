//! A tiny randomly initialised model for fast tests elsewhere: a real byte-level BPE tokenizer
//! (256 byte tokens, a few merges, ChatML special tokens), a ChatML template, a few small
//! layers. Deterministic from a seed; can be written as a Hugging Face folder so binaries can
//! be pointed at it with `--model DIR`.

use std::collections::HashMap;
use std::path::Path;

use candle_core::{Device, Tensor};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::{Vocab, BPE};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::AddedToken;

use crate::chat::{ChatTemplate, CHATML};
use crate::config::{Family, ModelConfig, TokenIds};
use crate::error::{Error, Result};
use crate::model::Model;
use crate::tokenizer::Tokenizer;
use crate::weights::{expected_shapes, Weights};

/// Special tokens of the tiny tokenizer (ids 0, 1, 2 as in SmolLM2).
pub const TINY_SPECIALS: [&str; 3] = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"];

/// Sizes of a tiny model.
#[derive(Debug, Clone, Copy)]
pub struct TinySpec {
    pub family: Family,
    pub hidden: usize,
    pub intermediate: usize,
    pub layers: usize,
    pub heads: usize,
    pub kv_heads: usize,
    /// Standard deviation of the random matrices.
    pub std: f32,
    /// Context length (`max_position_embeddings`); designer prompts with an example environment
    /// are a few thousand of the tiny tokenizer's byte-level tokens.
    pub context: usize,
}

impl Default for TinySpec {
    fn default() -> Self {
        TinySpec { family: Family::Llama, hidden: 64, intermediate: 128, layers: 2, heads: 4, kv_heads: 2, std: 0.08, context: 1024 }
    }
}

/// The tiny tokenizer: ChatML specials, the 256 byte-level symbols and a few merges.
pub fn tiny_tokenizer() -> Result<Tokenizer> {
    let mut vocab = Vocab::default();
    for (i, s) in TINY_SPECIALS.iter().enumerate() {
        vocab.insert(s.to_string(), i as u32);
    }
    let mut alphabet: Vec<char> = ByteLevel::alphabet().into_iter().collect();
    alphabet.sort_unstable();
    for c in alphabet {
        let id = vocab.len() as u32;
        vocab.insert(c.to_string(), id);
    }
    let mut merges = Vec::new();
    for (a, b) in [("Ġ", "t"), ("h", "e"), ("i", "n"), ("Ġt", "he"), ("e", "r"), ("o", "n"), ("a", "n")] {
        merges.push((a.to_string(), b.to_string()));
        let id = vocab.len() as u32;
        vocab.entry(format!("{a}{b}")).or_insert(id);
    }
    let bpe = BPE::builder().vocab_and_merges(vocab, merges).build().map_err(|e| Error::Tokenizer(e.to_string()))?;
    let mut inner = tokenizers::Tokenizer::new(bpe);
    inner.with_pre_tokenizer(Some(Sequence::new(vec![Digits::new(true).into(), ByteLevel::new(false, true, true).into()])));
    inner.with_decoder(Some(ByteLevelDecoder::default()));
    let specials: Vec<AddedToken> = TINY_SPECIALS.iter().map(|s| AddedToken::from(s.to_string(), true)).collect();
    inner.add_special_tokens(&specials);
    Ok(Tokenizer::new(inner, Some("<|im_start|>".into()), Some("<|im_end|>".into()), Some("<|endoftext|>".into())))
}

/// A tiny random model, deterministic from `seed`.
pub fn tiny_model(seed: u64, spec: TinySpec, device: &Device) -> Result<Model> {
    let tokenizer = tiny_tokenizer()?;
    let head_dim = spec.hidden / spec.heads;
    let mut cfg =
        ModelConfig::new(spec.family, tokenizer.vocab_size(), spec.hidden, spec.intermediate, spec.layers, spec.heads, spec.kv_heads, head_dim);
    cfg.max_position_embeddings = spec.context;
    cfg.bos_token_id = Some(1);
    cfg.eos_token_id = Some(TokenIds::One(2));
    cfg.pad_token_id = Some(0);
    cfg.tie_word_embeddings = spec.family != Family::Qwen3;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut tensors = HashMap::new();
    for (name, shape) in expected_shapes(&cfg) {
        let n: usize = shape.iter().product();
        let is_norm = name.ends_with("norm.weight");
        let data: Vec<f32> = (0..n)
            .map(|_| {
                // Box-Muller normal.
                let u1: f32 = rng.random::<f32>().max(1e-7);
                let u2: f32 = rng.random::<f32>();
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f32::consts::PI * u2).cos();
                if is_norm {
                    1.0 + 0.1 * z
                } else {
                    spec.std * z
                }
            })
            .collect();
        tensors.insert(name, Tensor::from_vec(data, shape, &Device::Cpu)?);
    }
    let weights = Weights::from_tensors(&cfg, tensors, device)?;
    let chat = ChatTemplate::new(CHATML, tokenizer.bos_token(), tokenizer.eos_token())?;
    Model::new(cfg, weights, tokenizer, chat, vec![2], device.clone(), format!("tiny(seed={seed})"))
}

/// Write a tiny random model as a Hugging Face folder at `dir` (deterministic from `seed`).
pub fn write_tiny_model(dir: &Path, seed: u64, spec: TinySpec) -> Result<()> {
    let m = tiny_model(seed, spec, &Device::Cpu)?;
    crate::checkpoint::save_hf_folder(&m, dir)
}
