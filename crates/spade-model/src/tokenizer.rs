//! Tokenizer from model files: `tokenizer.json` for Hugging Face folders, or a byte-level BPE
//! rebuilt from GGUF metadata (candle's GGUF helper gives wrong ids for SmolLM2, see DESIGN).

use std::path::Path;

use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
use tokenizers::models::bpe::{Vocab, BPE};
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence;
use tokenizers::processors::template::TemplateProcessing;
use tokenizers::AddedToken;

use crate::error::{model_err, Error, Result};

/// A text tokenizer with the model's special tokens.
#[derive(Clone)]
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    bos: Option<String>,
    eos: Option<String>,
    pad: Option<String>,
}

/// What GGUF metadata says about a tokenizer (`tokenizer.ggml.*`).
pub struct GgufVocab {
    pub model: String,
    pub pre: Option<String>,
    pub tokens: Vec<String>,
    pub merges: Vec<String>,
    pub token_types: Vec<i32>,
    pub bos: Option<u32>,
    pub eos: Option<u32>,
    pub pad: Option<u32>,
    pub add_bos: bool,
}

impl Tokenizer {
    /// Wrap a `tokenizers` tokenizer with the names of its special tokens.
    pub fn new(inner: tokenizers::Tokenizer, bos: Option<String>, eos: Option<String>, pad: Option<String>) -> Self {
        Tokenizer { inner, bos, eos, pad }
    }

    /// Load `tokenizer.json`; special token names come from `tokenizer_config.json` (optional).
    pub fn from_files(tokenizer_json: &Path, tokenizer_config: Option<&serde_json::Value>) -> Result<Self> {
        let inner = tokenizers::Tokenizer::from_file(tokenizer_json).map_err(|e| Error::Tokenizer(format!("{}: {e}", tokenizer_json.display())))?;
        let name = |key: &str| -> Option<String> {
            let v = tokenizer_config?.get(key)?;
            match v {
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Object(o) => o.get("content").and_then(|c| c.as_str()).map(String::from),
                _ => None,
            }
        };
        Ok(Tokenizer { inner, bos: name("bos_token"), eos: name("eos_token"), pad: name("pad_token") })
    }

    /// Build a byte-level BPE from GGUF vocab and merges (`model = gpt2`): a digits-then-bytelevel
    /// pre-tokenizer, ByteLevel decoder, type-3 (control) and type-4 (user-defined) tokens added
    /// as special tokens. This reproduces llama.cpp's ids for SmolLM2 (`pre = smollm`).
    pub fn from_gguf(v: &GgufVocab) -> Result<Self> {
        if v.model != "gpt2" {
            return Err(model_err(format!("GGUF tokenizer model {:?} is not supported (only byte-level BPE, `gpt2`)", v.model)));
        }
        let vocab: Vocab = v.tokens.iter().enumerate().map(|(i, t)| (t.clone(), i as u32)).collect();
        let merges: Vec<(String, String)> = v
            .merges
            .iter()
            .map(|m| {
                let mut it = m.splitn(2, ' ');
                let a = it.next().unwrap_or_default().to_string();
                let b = it.next().unwrap_or_default().to_string();
                (a, b)
            })
            .collect();
        let bpe = BPE::builder().vocab_and_merges(vocab, merges).build().map_err(|e| Error::Tokenizer(e.to_string()))?;
        let mut inner = tokenizers::Tokenizer::new(bpe);
        // llama.cpp's `smollm` pre-tokenizer: single digits, then the GPT-2 regex on bytes.
        // Other gpt2-style `pre` values (e.g. qwen2, llama-bpe) use different regexes; they are
        // approximated by the same GPT-2 split (documented limit; HF folders are exact).
        if !matches!(v.pre.as_deref(), None | Some("smollm") | Some("default") | Some("gpt2")) {
            tracing::warn!(pre = ?v.pre, "GGUF pre-tokenizer approximated by digits + GPT-2 byte level");
        }
        let pre: Vec<tokenizers::PreTokenizerWrapper> = vec![Digits::new(true).into(), ByteLevel::new(false, true, true).into()];
        inner.with_pre_tokenizer(Some(Sequence::new(pre)));
        inner.with_decoder(Some(ByteLevelDecoder::default()));
        let specials: Vec<AddedToken> =
            v.tokens.iter().zip(v.token_types.iter()).filter(|(_, &t)| t == 3 || t == 4).map(|(s, _)| AddedToken::from(s.clone(), true)).collect();
        inner.add_special_tokens(&specials);
        let name = |id: Option<u32>| id.and_then(|i| v.tokens.get(i as usize).cloned());
        let bos = name(v.bos);
        if v.add_bos {
            if let (Some(b), Some(id)) = (&bos, v.bos) {
                let post = TemplateProcessing::builder()
                    .try_single(format!("{b} $A"))
                    .and_then(|x| x.try_pair(format!("{b} $A {b} $B")))
                    .map_err(|e| Error::Tokenizer(e.to_string()))?
                    .special_tokens(vec![(b.clone(), id)])
                    .build()
                    .map_err(|e| Error::Tokenizer(e.to_string()))?;
                inner.with_post_processor(Some(post));
            }
        }
        Ok(Tokenizer { inner, bos, eos: name(v.eos), pad: name(v.pad) })
    }

    /// The wrapped `tokenizers` tokenizer.
    pub fn inner(&self) -> &tokenizers::Tokenizer {
        &self.inner
    }

    /// Encode text. `add_special` adds what the tokenizer's post-processor adds (e.g. BOS);
    /// special tokens written in the text (`<|im_start|>`) are always recognised.
    pub fn encode(&self, text: &str, add_special: bool) -> Result<Vec<u32>> {
        Ok(self.inner.encode(text, add_special)?.get_ids().to_vec())
    }

    /// Decode ids to text (special tokens kept unless `skip_special`).
    pub fn decode(&self, ids: &[u32], skip_special: bool) -> Result<String> {
        Ok(self.inner.decode(ids, skip_special)?)
    }

    pub fn token_to_id(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    pub fn id_to_token(&self, id: u32) -> Option<String> {
        self.inner.id_to_token(id)
    }

    /// Vocabulary size including added tokens.
    pub fn vocab_size(&self) -> usize {
        self.inner.get_vocab_size(true)
    }

    pub fn bos_token(&self) -> Option<&str> {
        self.bos.as_deref()
    }
    pub fn eos_token(&self) -> Option<&str> {
        self.eos.as_deref()
    }
    pub fn pad_token(&self) -> Option<&str> {
        self.pad.as_deref()
    }
    pub fn bos_id(&self) -> Option<u32> {
        self.bos.as_deref().and_then(|t| self.token_to_id(t))
    }
    pub fn eos_id(&self) -> Option<u32> {
        self.eos.as_deref().and_then(|t| self.token_to_id(t))
    }
    /// The padding id: the pad token, else EOS, else 0 (padded positions are masked anyway).
    pub fn pad_id(&self) -> u32 {
        self.pad.as_deref().and_then(|t| self.token_to_id(t)).or_else(|| self.eos_id()).unwrap_or(0)
    }

    /// Write `tokenizer.json`.
    pub fn save(&self, path: &Path) -> Result<()> {
        self.inner.save(path, false).map_err(|e| Error::Tokenizer(format!("{}: {e}", path.display())))
    }

    /// The added tokens marked special, as (id, content), sorted by id.
    pub fn special_tokens(&self) -> Vec<(u32, String)> {
        let mut v: Vec<(u32, String)> =
            self.inner.get_added_tokens_decoder().into_iter().filter(|(_, t)| t.special).map(|(id, t)| (id, t.content)).collect();
        v.sort();
        v
    }
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer").field("vocab_size", &self.vocab_size()).field("bos", &self.bos).field("eos", &self.eos).finish()
    }
}
