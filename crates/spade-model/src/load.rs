//! Loading: GGUF files (llama.cpp layout, any quantisation candle reads) and Hugging Face
//! folders (`config.json`, `tokenizer.json`, `*.safetensors`), which is also the layout of a
//! spade checkpoint. Both end in the same [`Model`] with f32 weights under HF names.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use candle_core::quantized::gguf_file;
use candle_core::{Device, Tensor};

use crate::chat::{ChatTemplate, CHATML};
use crate::config::{Family, ModelConfig, TokenIds};
use crate::error::{model_err, Error, Result};
use crate::model::Model;
use crate::tokenizer::{GgufVocab, Tokenizer};
use crate::weights::Weights;

/// End-of-turn tokens recognised in chat templates.
const END_OF_TURN: &[&str] = &["<|im_end|>", "<|eot_id|>", "<|end|>", "<end_of_turn>", "<|endoftext|>"];

/// Load a model from a `.gguf` file, a Hugging Face folder or a spade checkpoint folder (after
/// checking `SPADE_ISA`: a level this CPU lacks is an error here, before any work).
pub fn load(path: &Path, device: &Device) -> Result<Model> {
    crate::kernels::configured().map_err(Error::Invalid)?;
    if !path.exists() {
        Err(model_err(format!("{}: no such model file or folder", path.display())))
    } else if path.is_dir() {
        load_hf_folder(path, device)
    } else if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gguf")) {
        load_gguf(path, device)
    } else {
        Err(model_err(format!("{}: expected a .gguf file or a folder with config.json", path.display())))
    }
}

fn md_usize(md: &HashMap<String, gguf_file::Value>, key: &str) -> Option<usize> {
    use gguf_file::Value as V;
    Some(match md.get(key)? {
        V::U8(v) => *v as usize,
        V::I8(v) => *v as usize,
        V::U16(v) => *v as usize,
        V::I16(v) => *v as usize,
        V::U32(v) => *v as usize,
        V::I32(v) => *v as usize,
        V::U64(v) => *v as usize,
        V::I64(v) => *v as usize,
        _ => return None,
    })
}

fn md_f64(md: &HashMap<String, gguf_file::Value>, key: &str) -> Option<f64> {
    use gguf_file::Value as V;
    Some(match md.get(key)? {
        V::F32(v) => *v as f64,
        V::F64(v) => *v,
        _ => md_usize(md, key)? as f64,
    })
}

fn md_str<'a>(md: &'a HashMap<String, gguf_file::Value>, key: &str) -> Option<&'a str> {
    md.get(key).and_then(|v| v.to_string().ok()).map(String::as_str)
}

fn md_strings(md: &HashMap<String, gguf_file::Value>, key: &str) -> Result<Vec<String>> {
    let v = md.get(key).ok_or_else(|| model_err(format!("GGUF metadata lacks {key}")))?;
    v.to_vec()?.iter().map(|x| x.to_string().cloned().map_err(Error::from)).collect()
}

/// Map a GGUF tensor name to its Hugging Face name.
pub fn gguf_to_hf_name(name: &str) -> Option<String> {
    match name {
        "token_embd.weight" => return Some("model.embed_tokens.weight".into()),
        "output_norm.weight" => return Some("model.norm.weight".into()),
        "output.weight" => return Some("lm_head.weight".into()),
        _ => {}
    }
    let rest = name.strip_prefix("blk.")?;
    let (idx, rest) = rest.split_once('.')?;
    let idx: usize = idx.parse().ok()?;
    let (base, kind) = rest.rsplit_once('.')?;
    let hf = match base {
        "attn_norm" => "input_layernorm",
        "attn_q" => "self_attn.q_proj",
        "attn_k" => "self_attn.k_proj",
        "attn_v" => "self_attn.v_proj",
        "attn_output" => "self_attn.o_proj",
        "attn_q_norm" => "self_attn.q_norm",
        "attn_k_norm" => "self_attn.k_norm",
        "ffn_norm" => "post_attention_layernorm",
        "ffn_gate" => "mlp.gate_proj",
        "ffn_up" => "mlp.up_proj",
        "ffn_down" => "mlp.down_proj",
        _ => return None,
    };
    Some(format!("model.layers.{idx}.{hf}.{kind}"))
}

/// Undo llama.cpp's q/k permutation for its interleaved rotary layout:
/// `(heads, hd/2, 2, in) → transpose(1, 2)`. Works for weights `(out, in)` and biases `(out,)`.
pub fn unpermute_qk(t: &Tensor, heads: usize) -> Result<Tensor> {
    let dims = t.dims().to_vec();
    let out = dims[0];
    let hd = out / heads;
    let rest: usize = dims[1..].iter().product();
    let y = t.reshape((heads, hd / 2, 2, rest))?.transpose(1, 2)?.contiguous()?.reshape(dims)?;
    Ok(y)
}

/// The inverse of [`unpermute_qk`] (what llama.cpp's converter does).
pub fn permute_qk(t: &Tensor, heads: usize) -> Result<Tensor> {
    let dims = t.dims().to_vec();
    let hd = dims[0] / heads;
    let rest: usize = dims[1..].iter().product();
    Ok(t.reshape((heads, 2, hd / 2, rest))?.transpose(1, 2)?.contiguous()?.reshape(dims)?)
}

/// Load a GGUF file: metadata → [`ModelConfig`], tensors dequantised to f32 under HF names (q/k
/// un-permuted for the `llama` architecture), tokenizer rebuilt from the vocab and merges,
/// chat template from `tokenizer.chat_template`.
pub fn load_gguf(path: &Path, device: &Device) -> Result<Model> {
    let mut file = fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let content = gguf_file::Content::read(&mut file).map_err(|e| model_err(format!("{}: {e}", path.display())))?;
    let md = &content.metadata;
    let arch = md_str(md, "general.architecture").unwrap_or("llama").to_string();
    let family = match arch.as_str() {
        "llama" | "mistral" => Family::Llama,
        "qwen2" => Family::Qwen2,
        "qwen3" => Family::Qwen3,
        a => return Err(model_err(format!("{}: GGUF architecture {a:?} not supported", path.display()))),
    };
    let key = |k: &str| format!("{arch}.{k}");
    let need = |k: &str| md_usize(md, &key(k)).ok_or_else(|| model_err(format!("GGUF metadata lacks {}", key(k))));
    let tokens = md_strings(md, "tokenizer.ggml.tokens")?;
    let hidden = need("embedding_length")?;
    let heads = need("attention.head_count")?;
    let kv_heads = md_usize(md, &key("attention.head_count_kv")).unwrap_or(heads);
    let head_dim = md_usize(md, &key("attention.key_length")).unwrap_or(hidden / heads);
    let mut cfg = ModelConfig::new(
        family,
        md_usize(md, &key("vocab_size")).unwrap_or(tokens.len()),
        hidden,
        need("feed_forward_length")?,
        need("block_count")?,
        heads,
        kv_heads,
        head_dim,
    );
    if family == Family::Llama && head_dim == hidden / heads {
        cfg.head_dim = None;
    }
    cfg.rms_norm_eps = md_f64(md, &key("attention.layer_norm_rms_epsilon")).unwrap_or(1e-5);
    cfg.rope_theta = md_f64(md, &key("rope.freq_base")).unwrap_or(10_000.0);
    cfg.max_position_embeddings = md_usize(md, &key("context_length")).unwrap_or(2048);
    cfg.tie_word_embeddings = !content.tensor_infos.contains_key("output.weight");
    cfg.bos_token_id = md_usize(md, "tokenizer.ggml.bos_token_id").map(|v| v as u32);
    cfg.eos_token_id = md_usize(md, "tokenizer.ggml.eos_token_id").map(|v| TokenIds::One(v as u32));
    cfg.pad_token_id = md_usize(md, "tokenizer.ggml.padding_token_id").map(|v| v as u32);
    cfg.validate()?;

    let mut tensors = HashMap::new();
    let mut names: Vec<&String> = content.tensor_infos.keys().collect();
    names.sort();
    for name in names {
        let Some(hf) = gguf_to_hf_name(name) else {
            tracing::debug!(tensor = %name, "GGUF tensor ignored");
            continue;
        };
        let q = content.tensor(&mut file, name, &Device::Cpu)?;
        let mut t = q.dequantize(&Device::Cpu)?;
        if family == Family::Llama {
            if hf.ends_with("self_attn.q_proj.weight") || hf.ends_with("self_attn.q_proj.bias") {
                t = unpermute_qk(&t, heads)?;
            } else if hf.ends_with("self_attn.k_proj.weight") || hf.ends_with("self_attn.k_proj.bias") {
                t = unpermute_qk(&t, kv_heads)?;
            }
        }
        tensors.insert(hf, t);
    }
    let weights = Weights::from_tensors(&cfg, tensors, device)?;

    let vocab = GgufVocab {
        model: md_str(md, "tokenizer.ggml.model").unwrap_or("gpt2").to_string(),
        pre: md_str(md, "tokenizer.ggml.pre").map(String::from),
        merges: md_strings(md, "tokenizer.ggml.merges")?,
        token_types: match md.get("tokenizer.ggml.token_type") {
            Some(v) => v.to_vec()?.iter().map(|x| x.to_i32().unwrap_or(1)).collect(),
            None => vec![1; tokens.len()],
        },
        tokens,
        bos: cfg.bos_token_id,
        eos: cfg.eos_ids().first().copied(),
        pad: cfg.pad_token_id,
        add_bos: matches!(md.get("tokenizer.ggml.add_bos_token"), Some(gguf_file::Value::Bool(true))),
    };
    let tokenizer = Tokenizer::from_gguf(&vocab)?;
    let template_src = md_str(md, "tokenizer.chat_template").unwrap_or(CHATML).to_string();
    let chat = ChatTemplate::new(&template_src, tokenizer.bos_token(), tokenizer.eos_token())?;
    let mut eos = cfg.eos_ids();
    if let Some(eot) = md_usize(md, "tokenizer.ggml.eot_token_id") {
        eos.push(eot as u32);
    }
    eos.extend(template_end_ids(&template_src, &tokenizer));
    Model::new(cfg, weights, tokenizer, chat, eos, device.clone(), path.display().to_string())
}

fn template_end_ids(template: &str, tok: &Tokenizer) -> Vec<u32> {
    END_OF_TURN.iter().filter(|t| template.contains(*t)).filter_map(|t| tok.token_to_id(t)).collect()
}

fn read_json(path: &Path) -> Result<serde_json::Value> {
    let text = fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| model_err(format!("{}: {e}", path.display())))
}

/// The safetensors files of a folder: the index's shards, `model.safetensors`, or every
/// `*.safetensors` except spade's `optimizer.safetensors`.
pub fn safetensors_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let index = dir.join("model.safetensors.index.json");
    if index.exists() {
        let v = read_json(&index)?;
        let mut files: Vec<String> = v["weight_map"]
            .as_object()
            .ok_or_else(|| model_err(format!("{}: no weight_map", index.display())))?
            .values()
            .filter_map(|f| f.as_str().map(String::from))
            .collect();
        files.sort();
        files.dedup();
        return Ok(files.into_iter().map(|f| dir.join(f)).collect());
    }
    let single = dir.join("model.safetensors");
    if single.exists() {
        return Ok(vec![single]);
    }
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "safetensors") && p.file_name().is_some_and(|n| n != "optimizer.safetensors"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(model_err(format!("{}: no *.safetensors", dir.display())));
    }
    Ok(files)
}

/// The chat template of a HF folder: `chat_template.jinja`, `tokenizer_config.json`'s
/// `chat_template` (a string, or a list whose `default` entry is taken), or `chat_template.json`.
fn hf_chat_template(dir: &Path, tok_cfg: Option<&serde_json::Value>) -> Result<Option<String>> {
    let jinja = dir.join("chat_template.jinja");
    if jinja.exists() {
        return Ok(Some(fs::read_to_string(&jinja).map_err(|e| Error::io(&jinja, e))?));
    }
    let from_value = |v: &serde_json::Value| -> Option<String> {
        match v {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Array(items) => {
                items.iter().find(|i| i["name"] == "default").or_else(|| items.first()).and_then(|i| i["template"].as_str().map(String::from))
            }
            _ => None,
        }
    };
    if let Some(t) = tok_cfg.and_then(|c| c.get("chat_template")).and_then(from_value) {
        return Ok(Some(t));
    }
    let json = dir.join("chat_template.json");
    if json.exists() {
        return Ok(read_json(&json)?.get("chat_template").and_then(from_value));
    }
    Ok(None)
}

/// Load a Hugging Face folder (or a spade checkpoint folder).
pub fn load_hf_folder(dir: &Path, device: &Device) -> Result<Model> {
    let cfg_path = dir.join("config.json");
    if !cfg_path.exists() {
        return Err(model_err(format!("{}: no config.json", dir.display())));
    }
    let text = fs::read_to_string(&cfg_path).map_err(|e| Error::io(&cfg_path, e))?;
    let cfg = ModelConfig::from_json(&text).map_err(|e| model_err(format!("{}: {e}", cfg_path.display())))?;
    let tok_cfg_path = dir.join("tokenizer_config.json");
    let tok_cfg = if tok_cfg_path.exists() { Some(read_json(&tok_cfg_path)?) } else { None };
    let tokenizer = Tokenizer::from_files(&dir.join("tokenizer.json"), tok_cfg.as_ref())?;
    let template_src = hf_chat_template(dir, tok_cfg.as_ref())?.unwrap_or_else(|| CHATML.to_string());
    let chat = ChatTemplate::new(&template_src, tokenizer.bos_token(), tokenizer.eos_token())?;

    let mut tensors = HashMap::new();
    for f in safetensors_files(dir)? {
        let part = candle_core::safetensors::load(&f, &Device::Cpu).map_err(|e| model_err(format!("{}: {e}", f.display())))?;
        tensors.extend(part);
    }
    let weights = Weights::from_tensors(&cfg, tensors, device)?;

    let mut eos = cfg.eos_ids();
    let gen_path = dir.join("generation_config.json");
    if gen_path.exists() {
        if let Ok(ids) = serde_json::from_value::<TokenIds>(read_json(&gen_path)?["eos_token_id"].clone()) {
            eos.extend(ids.to_vec());
        }
    }
    eos.extend(tokenizer.eos_id());
    eos.extend(template_end_ids(&template_src, &tokenizer));
    Model::new(cfg, weights, tokenizer, chat, eos, device.clone(), dir.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gguf_names_map_to_hf() {
        assert_eq!(gguf_to_hf_name("token_embd.weight").unwrap(), "model.embed_tokens.weight");
        assert_eq!(gguf_to_hf_name("blk.12.attn_q.weight").unwrap(), "model.layers.12.self_attn.q_proj.weight");
        assert_eq!(gguf_to_hf_name("blk.0.attn_k.bias").unwrap(), "model.layers.0.self_attn.k_proj.bias");
        assert_eq!(gguf_to_hf_name("blk.3.attn_k_norm.weight").unwrap(), "model.layers.3.self_attn.k_norm.weight");
        assert_eq!(gguf_to_hf_name("blk.3.ffn_norm.weight").unwrap(), "model.layers.3.post_attention_layernorm.weight");
        assert_eq!(gguf_to_hf_name("blk.3.ffn_down.weight").unwrap(), "model.layers.3.mlp.down_proj.weight");
        assert!(gguf_to_hf_name("rope_freqs.weight").is_none());
    }

    #[test]
    fn qk_permutation_round_trips_and_matches_llama_cpp() {
        // 2 heads of head_dim 4, 3 inputs: llama.cpp's permute interleaves the two rotary halves.
        let w = Tensor::arange(0f32, 24., &Device::Cpu).unwrap().reshape((8, 3)).unwrap();
        let p = permute_qk(&w, 2).unwrap();
        let rows: Vec<f32> = p.narrow(1, 0, 1).unwrap().flatten_all().unwrap().to_vec1().unwrap();
        // Head 0 rows 0..4 (HF: [r0, r1 | r2, r3]) become [r0, r2, r1, r3].
        assert_eq!(rows, vec![0., 6., 3., 9., 12., 18., 15., 21.]);
        let back = unpermute_qk(&p, 2).unwrap();
        assert_eq!(back.to_vec2::<f32>().unwrap(), w.to_vec2::<f32>().unwrap());
    }
}
