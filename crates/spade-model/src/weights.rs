//! One weight set, named as in Hugging Face checkpoints, held as candle `Var`s so the trainer can
//! differentiate and update it in place; the forward pass and generation read the same storage.

use std::collections::{BTreeMap, HashMap};

use candle_core::{DType, Device, Tensor, Var};

use crate::config::ModelConfig;
use crate::error::{model_err, Result};

/// The model's parameters by Hugging Face name (`model.layers.0.self_attn.q_proj.weight` …).
#[derive(Clone)]
pub struct Weights {
    vars: BTreeMap<String, Var>,
}

impl std::fmt::Debug for Weights {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Weights").field("tensors", &self.vars.len()).finish()
    }
}

/// The HF names of one layer's tensors.
pub(crate) fn layer_name(i: usize, suffix: &str) -> String {
    format!("model.layers.{i}.{suffix}")
}

/// Every tensor name the config requires, with its shape.
pub fn expected_shapes(cfg: &ModelConfig) -> Vec<(String, Vec<usize>)> {
    let (h, hd, nh, nkv, ff, v) =
        (cfg.hidden_size, cfg.head_dim(), cfg.num_attention_heads, cfg.num_kv_heads(), cfg.intermediate_size, cfg.vocab_size);
    let mut out = vec![("model.embed_tokens.weight".to_string(), vec![v, h])];
    for i in 0..cfg.num_hidden_layers {
        let n = |s: &str| layer_name(i, s);
        out.push((n("input_layernorm.weight"), vec![h]));
        out.push((n("self_attn.q_proj.weight"), vec![nh * hd, h]));
        out.push((n("self_attn.k_proj.weight"), vec![nkv * hd, h]));
        out.push((n("self_attn.v_proj.weight"), vec![nkv * hd, h]));
        out.push((n("self_attn.o_proj.weight"), vec![h, nh * hd]));
        if cfg.qkv_bias() {
            out.push((n("self_attn.q_proj.bias"), vec![nh * hd]));
            out.push((n("self_attn.k_proj.bias"), vec![nkv * hd]));
            out.push((n("self_attn.v_proj.bias"), vec![nkv * hd]));
        }
        if cfg.o_bias() {
            out.push((n("self_attn.o_proj.bias"), vec![h]));
        }
        if cfg.qk_norm() {
            out.push((n("self_attn.q_norm.weight"), vec![hd]));
            out.push((n("self_attn.k_norm.weight"), vec![hd]));
        }
        out.push((n("post_attention_layernorm.weight"), vec![h]));
        out.push((n("mlp.gate_proj.weight"), vec![ff, h]));
        out.push((n("mlp.up_proj.weight"), vec![ff, h]));
        out.push((n("mlp.down_proj.weight"), vec![h, ff]));
    }
    out.push(("model.norm.weight".to_string(), vec![h]));
    if !cfg.tie_word_embeddings {
        out.push(("lm_head.weight".to_string(), vec![v, h]));
    }
    out
}

impl Weights {
    /// Take the tensors the config needs from a name → tensor map (checking every shape),
    /// converting to f32 on `device`. Extra tensors (e.g. `lm_head.weight` of a tied model,
    /// rotary caches) are ignored.
    pub fn from_tensors(cfg: &ModelConfig, mut tensors: HashMap<String, Tensor>, device: &Device) -> Result<Self> {
        let mut vars = BTreeMap::new();
        for (name, shape) in expected_shapes(cfg) {
            let t = tensors.remove(&name).ok_or_else(|| model_err(format!("missing tensor {name}")))?;
            if t.dims() != shape.as_slice() {
                return Err(model_err(format!("tensor {name}: shape {:?}, expected {:?}", t.dims(), shape)));
            }
            let t = t.to_dtype(DType::F32)?.to_device(device)?;
            vars.insert(name, Var::from_tensor(&t)?);
        }
        Ok(Weights { vars })
    }

    /// The variable of a name.
    pub fn var(&self, name: &str) -> Result<&Var> {
        self.vars.get(name).ok_or_else(|| model_err(format!("no tensor {name}")))
    }

    /// The tensor of a name (shares storage with the variable).
    pub fn get(&self, name: &str) -> Result<Tensor> {
        Ok(self.var(name)?.as_tensor().clone())
    }

    pub fn get_opt(&self, name: &str) -> Option<Tensor> {
        self.vars.get(name).map(|v| v.as_tensor().clone())
    }

    /// All trainable variables, by name (sorted).
    pub fn named_vars(&self) -> &BTreeMap<String, Var> {
        &self.vars
    }

    /// All trainable variables in name order (for an optimizer).
    pub fn vars(&self) -> Vec<Var> {
        self.vars.values().cloned().collect()
    }

    /// Number of scalar parameters.
    pub fn num_params(&self) -> usize {
        self.vars.values().map(|v| v.elem_count()).sum()
    }

    /// A name → tensor map (what `model.safetensors` holds).
    pub fn to_tensors(&self) -> HashMap<String, Tensor> {
        self.vars.iter().map(|(k, v)| (k.clone(), v.as_tensor().clone())).collect()
    }
}
