//! Model runtime on candle: loading (GGUF, HF folders), tokenizer and chat template, batched
//! generation, scoring, and a trainable forward sharing one weight set.
//!
//! Generation has one entry point, the [`Generator`] trait: [`Model`] is the embedded one (the
//! engine); the rest of the crate never reaches outside the process. Two features add what
//! programs need around it:
//!
//! - `server`: the HTTP client of an OpenAI-compatible completions server serving the same model,
//!   and its [`Generator`], `ServedModel` (`server`; `LocalServer` runs llama-server for tests).
//! - `cli`: the stages' command-line options (`options`: `ModelArgs`; `ServerArgs` become flags
//!   too), and with `server` the loader of a stage's generator, `ModelArgs::load_generator`.
//!
//! Neither is imported by the core modules (model, generate, engine, blocks, score, ops, …): the
//! arrows go from `options` and `server` to the core, never back.
//!
//! ```no_run
//! use spade_model::{load, GenerationRequest, Message, SamplingParams, Repr};
//! let mut model = load(std::path::Path::new("model.gguf"), &candle_core::Device::Cpu)?;
//! model.set_inference_repr(Repr::Q8_0)?;
//! let prompt = model.encode_chat(&[Message::user("Hi")], true)?;
//! let out = model.generate(&[GenerationRequest { prompt, seed: 1 }], &SamplingParams::default())?;
//! println!("{}", out[0].text);
//! # Ok::<(), spade_model::Error>(())
//! ```

pub mod blas;
mod blocks;
pub mod chat;
pub mod checkpoint;
pub mod config;
pub mod engine;
pub mod error;
pub mod generate;
pub mod generator;
pub mod kernels;
pub mod kv;
pub mod load;
pub mod model;
mod ops;
#[cfg(feature = "cli")]
pub mod options;
mod repr;
pub mod score;
#[cfg(feature = "server")]
pub mod server;
pub mod setup;
pub mod tiny;
pub mod tokenizer;
pub mod weights;

pub use blocks::zeros;
pub use chat::{ChatTemplate, Message};
pub use checkpoint::{save_hf_folder, Checkpoint};
pub use config::{Family, ModelConfig};
pub use error::{Error, Result};
pub use generate::{FinishReason, Generation, GenerationRequest, SamplingParams};
pub use generator::Generator;
pub use kv::{EngineStats, KvStore};
pub use load::{load, load_gguf, load_hf_folder};
pub use model::{Batch, KvCache, Model, Repr};
#[cfg(feature = "cli")]
pub use options::ModelArgs;
pub use score::{add_store, add_tensor, Checkpointed, GradBuffers};
#[cfg(feature = "server")]
pub use server::{LocalServer, ServedModel, Server, ServerArgs, ServerSpec, SERVER_ENV};
pub use setup::{default_model_path, home, parse_device, set_threads, HOME_ENV, MODEL_ENV, THREADS_ENV};
pub use tiny::{tiny_model, write_tiny_model, TinySpec};
pub use tokenizer::Tokenizer;
pub use weights::Weights;

/// Re-exported so callers name the same candle.
pub use candle_core;

/// Tell glibc's allocator to keep freed buffers in the process (once per process; the trainer
/// calls it): a training step allocates and frees the same large activation buffers block after
/// block and sample after sample, and by default glibc maps each one afresh and unmaps it on
/// free (above its 128 KiB–32 MiB sliding threshold) or trims the heap top, so every block pays
/// page faults and zeroing again. With the mapping threshold at its 32 MiB maximum and trimming
/// only above 1 GiB free, the forward of a round's designer update in `spade-grpo-step` took
/// 38.6 s instead of 57.3 s (2026-12-07, 8 samples of ~1,850 tokens). The process keeps its peak memory until it exits; elsewhere than glibc
/// nothing changes.
pub fn keep_freed_memory() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallopt only sets allocator parameters; it is called before the step allocates.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 1 << 30);
        }
    });
}
