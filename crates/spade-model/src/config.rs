//! Model configuration mirroring Hugging Face `config.json` (Llama, Qwen2, Qwen3 families).

use serde::{Deserialize, Serialize};

use crate::error::{model_err, Result};

/// The architecture family; decides biases and q/k-norm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// Llama, Mistral, SmolLM: no biases, no q/k norm.
    Llama,
    /// Qwen2 / Qwen2.5: biases on q, k, v.
    Qwen2,
    /// Qwen3: RMS q/k norm per head, no biases.
    Qwen3,
}

/// `eos_token_id` in `config.json` is either one id or a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TokenIds {
    One(u32),
    Many(Vec<u32>),
}

impl TokenIds {
    pub fn to_vec(&self) -> Vec<u32> {
        match self {
            TokenIds::One(id) => vec![*id],
            TokenIds::Many(ids) => ids.clone(),
        }
    }
}

/// `rope_scaling` of `config.json` (only the Llama 3 kind changes anything here).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RopeScaling {
    #[serde(default, alias = "type", skip_serializing_if = "Option::is_none")]
    pub rope_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low_freq_factor: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high_freq_factor: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub original_max_position_embeddings: Option<usize>,
}

/// A Hugging Face `config.json` for the supported decoder-only families. Unknown keys are
/// kept in `extra` and written back on save; a field that is not set is left out (transformers 5
/// refuses `"attention_bias": null`, and an absent key means the family's default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelConfig {
    #[serde(default)]
    pub architectures: Vec<String>,
    pub model_type: String,
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_key_value_heads: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_dim: Option<usize>,
    #[serde(default = "default_eps")]
    pub rms_norm_eps: f64,
    #[serde(default = "default_theta")]
    pub rope_theta: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rope_scaling: Option<RopeScaling>,
    #[serde(default = "default_ctx")]
    pub max_position_embeddings: usize,
    #[serde(default)]
    pub tie_word_embeddings: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attention_bias: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bos_token_id: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eos_token_id: Option<TokenIds>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pad_token_id: Option<u32>,
    #[serde(default = "default_act")]
    pub hidden_act: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub torch_dtype: Option<String>,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

fn default_eps() -> f64 {
    1e-6
}
fn default_theta() -> f64 {
    10_000.0
}
fn default_ctx() -> usize {
    2048
}
fn default_act() -> String {
    "silu".to_string()
}

impl ModelConfig {
    /// Parse `config.json` text.
    pub fn from_json(text: &str) -> Result<Self> {
        let cfg: ModelConfig = serde_json::from_str(text)?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// The family, from `model_type` (or `architectures`).
    pub fn family(&self) -> Result<Family> {
        let t = self.model_type.to_ascii_lowercase();
        let arch = self.architectures.first().map(|a| a.to_ascii_lowercase()).unwrap_or_default();
        if t == "qwen3" || arch.starts_with("qwen3forcausallm") {
            Ok(Family::Qwen3)
        } else if t == "qwen2" || arch.starts_with("qwen2forcausallm") {
            Ok(Family::Qwen2)
        } else if matches!(t.as_str(), "llama" | "mistral" | "smollm" | "smollm2" | "smollm3")
            || arch.starts_with("llamaforcausallm")
            || arch.starts_with("mistralforcausallm")
        {
            Ok(Family::Llama)
        } else {
            Err(model_err(format!("unsupported model_type {:?} (supported: llama, mistral, qwen2, qwen3)", self.model_type)))
        }
    }

    pub fn validate(&self) -> Result<()> {
        self.family()?;
        if self.hidden_act != "silu" {
            return Err(model_err(format!("unsupported hidden_act {:?}", self.hidden_act)));
        }
        if self.num_attention_heads == 0 || !self.num_attention_heads.is_multiple_of(self.num_kv_heads()) {
            return Err(model_err("num_attention_heads must be a multiple of num_key_value_heads"));
        }
        if !self.head_dim().is_multiple_of(2) {
            return Err(model_err("head_dim must be even"));
        }
        Ok(())
    }

    pub fn num_kv_heads(&self) -> usize {
        self.num_key_value_heads.unwrap_or(self.num_attention_heads)
    }

    pub fn head_dim(&self) -> usize {
        self.head_dim.unwrap_or(self.hidden_size / self.num_attention_heads.max(1))
    }

    /// Whether q, k, v projections carry biases (always for Qwen2, `attention_bias` otherwise).
    pub fn qkv_bias(&self) -> bool {
        matches!(self.family(), Ok(Family::Qwen2)) || self.attention_bias.unwrap_or(false)
    }

    /// Whether `o_proj` carries a bias (Llama's `attention_bias` covers it too).
    pub fn o_bias(&self) -> bool {
        !matches!(self.family(), Ok(Family::Qwen2)) && self.attention_bias.unwrap_or(false)
    }

    /// Whether q and k are RMS-normalised per head before rotary (Qwen3).
    pub fn qk_norm(&self) -> bool {
        matches!(self.family(), Ok(Family::Qwen3))
    }

    /// The context length (tokens of prompt plus completion the model was trained for).
    pub fn context_length(&self) -> usize {
        self.max_position_embeddings
    }

    /// End-of-sequence ids named by the config.
    pub fn eos_ids(&self) -> Vec<u32> {
        self.eos_token_id.as_ref().map(TokenIds::to_vec).unwrap_or_default()
    }

    /// Rotary inverse frequencies (length head_dim/2), with Llama 3 scaling when configured.
    pub fn inv_freq(&self) -> Vec<f32> {
        let hd = self.head_dim();
        let mut inv: Vec<f64> = (0..hd / 2).map(|i| 1.0 / self.rope_theta.powf(2.0 * i as f64 / hd as f64)).collect();
        if let Some(s) = &self.rope_scaling {
            if s.rope_type.as_deref() == Some("llama3") {
                let factor = s.factor.unwrap_or(8.0);
                let low = s.low_freq_factor.unwrap_or(1.0);
                let high = s.high_freq_factor.unwrap_or(4.0);
                let old_ctx = s.original_max_position_embeddings.unwrap_or(8192) as f64;
                let low_wavelen = old_ctx / low;
                let high_wavelen = old_ctx / high;
                for f in inv.iter_mut() {
                    let wavelen = 2.0 * std::f64::consts::PI / *f;
                    if wavelen > low_wavelen {
                        *f /= factor;
                    } else if wavelen >= high_wavelen {
                        let smooth = (old_ctx / wavelen - low) / (high - low);
                        *f = (1.0 - smooth) * *f / factor + smooth * *f;
                    }
                }
            }
        }
        inv.into_iter().map(|f| f as f32).collect()
    }

    /// A config for a family with the given sizes (used by the tiny random model and GGUF loading).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        family: Family,
        vocab_size: usize,
        hidden_size: usize,
        intermediate_size: usize,
        num_hidden_layers: usize,
        num_attention_heads: usize,
        num_key_value_heads: usize,
        head_dim: usize,
    ) -> Self {
        let (model_type, arch) = match family {
            Family::Llama => ("llama", "LlamaForCausalLM"),
            Family::Qwen2 => ("qwen2", "Qwen2ForCausalLM"),
            Family::Qwen3 => ("qwen3", "Qwen3ForCausalLM"),
        };
        ModelConfig {
            architectures: vec![arch.to_string()],
            model_type: model_type.to_string(),
            vocab_size,
            hidden_size,
            intermediate_size,
            num_hidden_layers,
            num_attention_heads,
            num_key_value_heads: Some(num_key_value_heads),
            head_dim: Some(head_dim),
            rms_norm_eps: 1e-5,
            rope_theta: 10_000.0,
            rope_scaling: None,
            max_position_embeddings: 2048,
            tie_word_embeddings: true,
            attention_bias: None,
            bos_token_id: None,
            eos_token_id: None,
            pad_token_id: None,
            hidden_act: "silu".to_string(),
            torch_dtype: Some("float32".to_string()),
            extra: serde_json::Map::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_hf_configs() {
        let llama = r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","vocab_size":49152,
            "hidden_size":576,"intermediate_size":1536,"num_hidden_layers":30,"num_attention_heads":9,
            "num_key_value_heads":3,"rms_norm_eps":1e-05,"rope_theta":100000,"max_position_embeddings":8192,
            "tie_word_embeddings":true,"bos_token_id":1,"eos_token_id":2,"hidden_act":"silu","use_cache":true}"#;
        let c = ModelConfig::from_json(llama).unwrap();
        assert_eq!(c.family().unwrap(), Family::Llama);
        assert_eq!(c.head_dim(), 64);
        assert_eq!(c.context_length(), 8192);
        assert!(!c.qkv_bias() && !c.qk_norm());
        assert_eq!(c.eos_ids(), vec![2]);
        // Unknown keys survive a round trip.
        let back: serde_json::Value = serde_json::to_value(&c).unwrap();
        assert_eq!(back["use_cache"], serde_json::json!(true));

        let qwen2 = r#"{"model_type":"qwen2","vocab_size":10,"hidden_size":8,"intermediate_size":16,
            "num_hidden_layers":1,"num_attention_heads":2,"num_key_value_heads":1,"eos_token_id":[3,4]}"#;
        let c = ModelConfig::from_json(qwen2).unwrap();
        assert!(c.qkv_bias() && !c.qk_norm());
        assert_eq!(c.eos_ids(), vec![3, 4]);
        let qwen3 = r#"{"model_type":"qwen3","vocab_size":10,"hidden_size":8,"intermediate_size":16,
            "num_hidden_layers":1,"num_attention_heads":2,"num_key_value_heads":1,"head_dim":8}"#;
        let c = ModelConfig::from_json(qwen3).unwrap();
        assert!(!c.qkv_bias() && c.qk_norm());
        assert_eq!(c.head_dim(), 8);
        assert!(ModelConfig::from_json(&qwen3.replace("qwen3", "gpt2")).is_err());
    }
}
