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
///
/// Text from outside the model's own template (an environment's observations and tool
/// results, a tool schema, a dataset's prompt) is data: [`Tokenizer::hide_special`] marks the
/// special-token strings in it, and [`Tokenizer::encode`] gives marked ones plain-text tokens,
/// so such text can never open or close a chat turn.
#[derive(Clone)]
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    /// The same tokenizer with special tokens not recognised in text.
    plain: tokenizers::Tokenizer,
    /// Special tokens as (content, id), longest first.
    specials: Vec<(String, u32)>,
    /// Whether some special token starts with this byte.
    first: [bool; 256],
    bos: Option<String>,
    eos: Option<String>,
    pad: Option<String>,
}

/// Starts a hidden special token; the next character is `MARK_BASE + index` into the specials.
const MARK: char = '\u{10FFFD}';
const MARK_BASE: u32 = 0x10_0000;

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
        let mut plain = inner.clone();
        plain.set_encode_special_tokens(true);
        let mut specials: Vec<(String, u32)> =
            inner.get_added_tokens_decoder().into_iter().filter(|(_, t)| t.special && !t.content.is_empty()).map(|(id, t)| (t.content, id)).collect();
        specials.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.1.cmp(&b.1)));
        let mut first = [false; 256];
        for (s, _) in &specials {
            first[s.as_bytes()[0] as usize] = true;
        }
        Tokenizer { inner, plain, specials, first, bos, eos, pad }
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
        Ok(Tokenizer::new(inner, name("bos_token"), name("eos_token"), name("pad_token")))
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
        Ok(Tokenizer::new(inner, bos, name(v.eos), name(v.pad)))
    }

    /// The wrapped `tokenizers` tokenizer.
    pub fn inner(&self) -> &tokenizers::Tokenizer {
        &self.inner
    }

    /// Encode text. `add_special` adds what the tokenizer's post-processor adds (e.g. BOS);
    /// special tokens written in the text (`<|im_start|>`) are recognised, except those
    /// [`Tokenizer::hide_special`] marked: those become plain-text tokens of the same characters.
    pub fn encode(&self, text: &str, add_special: bool) -> Result<Vec<u32>> {
        if !text.contains(MARK) {
            return Ok(self.inner.encode(text, add_special)?.get_ids().to_vec());
        }
        let mut ids = if add_special { self.inner.encode("", true)?.get_ids().to_vec() } else { Vec::new() };
        // The real special tokens (the template's) keep their ids; the text between them, with the
        // hidden ones restored, is encoded with special tokens not recognised.
        for (piece, special) in self.pieces(text) {
            match special {
                Some(k) => ids.push(self.specials[k].1),
                None => ids.extend_from_slice(self.plain.encode(self.unhide(piece).as_str(), false)?.get_ids()),
            }
        }
        Ok(ids)
    }

    /// Mark every special-token string in `text` (text that is data, not template), so that a
    /// chat template renders it without a turn boundary and [`Tokenizer::encode`] gives it the
    /// tokens of its plain characters.
    pub fn hide_special(&self, text: &str) -> String {
        if !self.specials.iter().any(|(s, _)| text.contains(s.as_str())) {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len() + 8);
        for (piece, special) in self.pieces(text) {
            match special {
                Some(k) => {
                    out.push(MARK);
                    out.push(char::from_u32(MARK_BASE + k as u32).expect("fewer specials than a plane"));
                }
                None => out.push_str(piece),
            }
        }
        out
    }

    /// `text` cut at its special tokens: runs of other text (`None`) and each special token
    /// (`Some(index into specials)`, the longest that matches), in order.
    fn pieces<'t>(&self, text: &'t str) -> Vec<(&'t str, Option<usize>)> {
        let mut out = Vec::new();
        let (mut start, mut i) = (0, 0);
        while i < text.len() {
            match self.special_at(text, i) {
                Some(k) => {
                    if start < i {
                        out.push((&text[start..i], None));
                    }
                    let end = i + self.specials[k].0.len();
                    out.push((&text[i..end], Some(k)));
                    (start, i) = (end, end);
                }
                None => i += text[i..].chars().next().map_or(1, char::len_utf8),
            }
        }
        if start < text.len() {
            out.push((&text[start..], None));
        }
        out
    }

    /// The special token (index into `specials`, the longest) that starts at byte `i` of `text`.
    fn special_at(&self, text: &str, i: usize) -> Option<usize> {
        if !self.first[text.as_bytes()[i] as usize] {
            return None;
        }
        self.specials.iter().position(|(s, _)| text[i..].starts_with(s.as_str()))
    }

    /// Hidden special tokens back to their characters (other text unchanged).
    fn unhide(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if c == MARK {
                if let Some((s, _)) = chars.peek().and_then(|&n| (n as u32).checked_sub(MARK_BASE)).and_then(|k| self.specials.get(k as usize)) {
                    out.push_str(s);
                    chars.next();
                    continue;
                }
            }
            out.push(c);
        }
        out
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
