//! Checkpoints: a Hugging Face folder (`config.json`, `tokenizer.json`, `tokenizer_config.json`
//! with the chat template, `generation_config.json`, `model.safetensors` in f32) that other tools
//! load, plus room for the trainer's `optimizer.safetensors` and `trainer_state.json`.
//! Every file is written to a temporary name in the folder and renamed.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::Model;

pub const CONFIG_FILE: &str = "config.json";
pub const TOKENIZER_FILE: &str = "tokenizer.json";
pub const TOKENIZER_CONFIG_FILE: &str = "tokenizer_config.json";
pub const GENERATION_CONFIG_FILE: &str = "generation_config.json";
pub const WEIGHTS_FILE: &str = "model.safetensors";
/// Written by the trainer (not by this crate).
pub const OPTIMIZER_FILE: &str = "optimizer.safetensors";
/// Written by the trainer (not by this crate).
pub const TRAINER_STATE_FILE: &str = "trainer_state.json";

/// A checkpoint folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub dir: PathBuf,
}

impl Checkpoint {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Checkpoint { dir: dir.into() }
    }
    pub fn weights_path(&self) -> PathBuf {
        self.dir.join(WEIGHTS_FILE)
    }
    pub fn optimizer_path(&self) -> PathBuf {
        self.dir.join(OPTIMIZER_FILE)
    }
    pub fn trainer_state_path(&self) -> PathBuf {
        self.dir.join(TRAINER_STATE_FILE)
    }
    /// Whether the folder holds a loadable model.
    pub fn exists(&self) -> bool {
        self.dir.join(CONFIG_FILE).exists() && self.weights_path().exists()
    }

    /// Save a model's files into the folder (created if needed). Other files there (optimizer,
    /// trainer state) are left alone.
    pub fn save_model(&self, model: &Model) -> Result<()> {
        save_hf_folder(model, &self.dir)
    }

    /// Write an extra file atomically (for the trainer's state files).
    pub fn write_file(&self, name: &str, bytes: &[u8]) -> Result<()> {
        write_atomic(&self.dir.join(name), |p| fs::write(p, bytes).map_err(|e| Error::io(p, e)))
    }
}

/// Write `path` through a temporary sibling and a rename.
pub fn write_atomic(path: &Path, write: impl FnOnce(&Path) -> Result<()>) -> Result<()> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    write(&tmp)?;
    fs::rename(&tmp, path).map_err(|e| Error::io(path, e))
}

fn write_json(path: &Path, v: &impl serde::Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(v)?;
    write_atomic(path, |p| fs::write(p, text + "\n").map_err(|e| Error::io(p, e)))
}

/// Save a model as a Hugging Face folder.
pub fn save_hf_folder(model: &Model, dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut cfg = model.config().clone();
    cfg.torch_dtype = Some("float32".into());
    write_json(&dir.join(CONFIG_FILE), &cfg)?;
    let tok = model.tokenizer();
    write_atomic(&dir.join(TOKENIZER_FILE), |p| tok.save(p))?;
    let tok_cfg = serde_json::json!({
        "tokenizer_class": "PreTrainedTokenizerFast",
        "chat_template": model.chat_template().source(),
        "bos_token": tok.bos_token(),
        "eos_token": tok.eos_token(),
        "pad_token": tok.pad_token(),
        "model_max_length": model.context_length(),
        "clean_up_tokenization_spaces": false,
    });
    write_json(&dir.join(TOKENIZER_CONFIG_FILE), &tok_cfg)?;
    let gen = serde_json::json!({
        "bos_token_id": cfg.bos_token_id,
        "eos_token_id": model.eos_ids(),
        "pad_token_id": cfg.pad_token_id,
    });
    write_json(&dir.join(GENERATION_CONFIG_FILE), &gen)?;
    let tensors = model.weights().to_tensors();
    write_atomic(&dir.join(WEIGHTS_FILE), |p| Ok(candle_core::safetensors::save(&tensors, p)?))?;
    Ok(())
}

/// The policy version of a model: the `step` recorded in `<model>/trainer_state.json` of a spade
/// checkpoint folder, 0 for anything else (a .gguf file, a plain Hugging Face folder).
pub fn policy_version(model: &Path) -> Result<i64> {
    let state = model.join(TRAINER_STATE_FILE);
    if !model.is_dir() || !state.exists() {
        return Ok(0);
    }
    let text = fs::read_to_string(&state).map_err(|e| Error::io(&state, e))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| Error::Model(format!("{}: invalid JSON: {e}", state.display())))?;
    v.get("step").and_then(|s| s.as_i64()).ok_or_else(|| Error::Model(format!("{}: field `step` missing or not an integer", state.display())))
}
