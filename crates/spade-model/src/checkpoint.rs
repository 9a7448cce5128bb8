//! Checkpoints: a Hugging Face folder (`config.json`, `tokenizer.json`, `tokenizer_config.json`
//! with the chat template, `generation_config.json`, `model.safetensors` in f32) that other tools
//! load, plus room for the trainer's `optimizer.safetensors` and `trainer_state.json`.
//! Every file is written to a temporary name in the folder and renamed.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use candle_core::{CpuStorage, Storage, Tensor};
use safetensors::{Dtype, View};

use crate::error::{Error, Result};
use crate::model::Model;

// The files are little-endian; f32 slices are written and read as their bytes.
const _: () = assert!(cfg!(target_endian = "little"), "checkpoint I/O assumes a little-endian CPU");

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
    write_atomic(&dir.join(WEIGHTS_FILE), |p| save_tensors(p, &tensors))?;
    Ok(())
}

/// A named f32 tensor lent for writing: (name, shape, values).
pub type LentF32<'a> = (String, Vec<usize>, &'a [f32]);

/// Named f32 tensors read from a file: name → (shape, values).
pub type F32Tensors = HashMap<String, (Vec<usize>, Vec<f32>)>;

/// An f32 tensor lent to the safetensors writer: its bytes are written from the slice.
struct F32View<'a> {
    shape: Vec<usize>,
    data: &'a [f32],
}

impl View for F32View<'_> {
    fn dtype(&self) -> Dtype {
        Dtype::F32
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(bytemuck::cast_slice(self.data))
    }
    fn data_len(&self) -> usize {
        std::mem::size_of_val(self.data)
    }
}

/// Write f32 tensors (name, shape, values) as a safetensors file at `path`, each written from its
/// slice: no copy of the values is made first (a checkpoint's 1.6 GB of weights and moments were
/// copied twice before, into tensors and into bytes). The same bytes as candle's writer.
pub fn save_f32(path: &Path, tensors: Vec<LentF32<'_>>) -> Result<()> {
    let mut views = Vec::with_capacity(tensors.len());
    for (name, shape, data) in tensors {
        if shape.iter().product::<usize>() != data.len() {
            return Err(Error::Invalid(format!("{}: tensor {name} has {} values for shape {shape:?}", path.display(), data.len())));
        }
        views.push((name, F32View { shape, data }));
    }
    safetensors::serialize_to_file(views, None, path).map_err(|e| Error::Model(format!("{}: cannot write: {e}", path.display())))
}

/// Write candle tensors as a safetensors file: f32 tensors in contiguous CPU memory through
/// [`save_f32`], anything else through candle's writer (which copies).
pub fn save_tensors(path: &Path, tensors: &HashMap<String, Tensor>) -> Result<()> {
    let held: Vec<_> = tensors.iter().map(|(k, t)| (k, t.storage_and_layout())).collect();
    let lent: Option<Vec<LentF32>> = held
        .iter()
        .map(|(k, (storage, layout))| match (&**storage, layout.contiguous_offsets()) {
            (Storage::Cpu(CpuStorage::F32(v)), Some((a, b))) => Some((k.to_string(), layout.dims().to_vec(), &v[a..b])),
            _ => None,
        })
        .collect();
    match lent {
        Some(lent) => save_f32(path, lent),
        None => {
            drop(held);
            Ok(candle_core::safetensors::save(tensors, path)?)
        }
    }
}

/// The f32 tensors of a safetensors file, read through a memory map (one copy, into the
/// returned vectors): name → (shape, values). Other dtypes are an error naming the tensor.
pub fn load_f32(path: &Path) -> Result<F32Tensors> {
    let file = fs::File::open(path).map_err(|e| Error::io(path, e))?;
    // SAFETY: checkpoint files are written under a temporary name and renamed into place
    // (`write_atomic`), never changed where they lie, so the mapped bytes do not change under us.
    let map = unsafe { memmap2::Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
    let st = safetensors::SafeTensors::deserialize(&map).map_err(|e| Error::Model(format!("{}: not a safetensors file: {e}", path.display())))?;
    let mut out = HashMap::new();
    for (name, view) in st.tensors() {
        if view.dtype() != Dtype::F32 {
            return Err(Error::Model(format!("{}: tensor {name} is {:?}, not F32", path.display(), view.dtype())));
        }
        let bytes = view.data();
        let mut values = vec![0f32; bytes.len() / 4];
        bytemuck::cast_slice_mut::<f32, u8>(&mut values).copy_from_slice(bytes);
        out.insert(name, (view.shape().to_vec(), values));
    }
    Ok(out)
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

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::{DType, Device, IndexOp};

    /// The borrowing writer gives the same file as candle's, reads back to the same values, and a
    /// tensor it cannot lend (a view with an offset into a larger one that is not contiguous, or
    /// another dtype) sends the whole file through candle's writer, with the same result.
    #[test]
    fn files_are_candles_bytes_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let big = Tensor::arange(0f32, 60.0, &Device::Cpu).unwrap().reshape((6, 10)).unwrap();
        let mut t: HashMap<String, Tensor> = HashMap::new();
        t.insert("b.weight".into(), big.clone());
        t.insert("a.bias".into(), Tensor::new(&[1.5f32, -2.25, 3.0], &Device::Cpu).unwrap());
        // rows 2..4: contiguous, at an offset into the storage
        t.insert("c.rows".into(), big.i(2..4).unwrap());
        let (ours, theirs) = (dir.path().join("ours.safetensors"), dir.path().join("theirs.safetensors"));
        save_tensors(&ours, &t).unwrap();
        candle_core::safetensors::save(&t, &theirs).unwrap();
        assert_eq!(fs::read(&ours).unwrap(), fs::read(&theirs).unwrap());
        let back = load_f32(&ours).unwrap();
        assert_eq!(back["c.rows"], (vec![2, 10], (20..40).map(|x| x as f32).collect::<Vec<_>>()));
        assert_eq!(back["a.bias"].1, [1.5, -2.25, 3.0]);

        // a column slice is not contiguous, and an f64 tensor is not f32: candle's writer
        t.insert("d.cols".into(), big.i((.., 3..5)).unwrap());
        t.insert("e.f64".into(), Tensor::new(&[1f64, 2.0], &Device::Cpu).unwrap().to_dtype(DType::F64).unwrap());
        save_tensors(&ours, &t).unwrap();
        candle_core::safetensors::save(&t, &theirs).unwrap();
        assert_eq!(fs::read(&ours).unwrap(), fs::read(&theirs).unwrap());
        let err = load_f32(&ours).unwrap_err().to_string();
        assert!(err.contains("e.f64") && err.contains("not F32"), "{err}");

        let err = save_f32(&ours, vec![("x".into(), vec![2, 3], &[1f32, 2.0][..])]).unwrap_err().to_string();
        assert!(err.contains("tensor x has 2 values for shape [2, 3]"), "{err}");
    }
}
