//! Shared command-line model options (`--model`, `--device`, `--threads`, `--temperature`,
//! `--repr`, `--kv-budget`) and the loaders the stages call (the `cli` feature). With the `server`
//! feature, `ModelArgs::load_generator` gives the stage's `Generator`: the embedded model, or the
//! `--server` (`ServerArgs`) serving it.
//!
//! The environment variables, the default model and spade's home are the core's
//! ([`crate::setup`]); they are re-exported here for the stages that name them through `options`.

use std::path::PathBuf;

use candle_core::Device;

use crate::error::Result;
#[cfg(feature = "server")]
use crate::generator::Generator;
use crate::model::{Model, Repr};
pub use crate::setup::{default_model_path, home, parse_device, set_threads, DEFAULT_MODEL_RELPATH, HOME_ENV, MODEL_ENV, THREADS_ENV};

/// Model options shared by every stage that loads a model (flatten into a command's args).
#[derive(Debug, Clone, PartialEq, clap::Args)]
pub struct ModelArgs {
    /// Model: a .gguf file, a Hugging Face folder or a spade checkpoint folder
    /// [default: the fetched SmolLM2-135M-Instruct GGUF]
    #[arg(long, env = MODEL_ENV, value_name = "PATH")]
    pub model: Option<PathBuf>,
    /// Compute device: cpu or cuda:N (CUDA needs the `cuda` build feature)
    #[arg(long, default_value = "cpu", value_name = "DEVICE")]
    pub device: String,
    /// Compute threads (default: physical cores)
    #[arg(long, env = THREADS_ENV, value_name = "N")]
    pub threads: Option<usize>,
    /// Sampling temperature (0 = greedy); log-probs are recorded at this temperature
    #[arg(long, default_value_t = 1.0, value_name = "T")]
    pub temperature: f32,
    /// Weight representation for generation: f32 (log-probs equal the trainer's), q8_0 (8-bit
    /// weights: faster on CPUs with AVX2, AVX-512 or ARM dotprod; log-probs off the trainer's by
    /// ~0.05 a token, which truncated importance sampling corrects), q4_1 (the layers in 4-bit
    /// blocks as the default model's GGUF ships them, the head in q8_0: the fastest single-stream
    /// decode, for weights that do not train, since a step's updates round away) or auto (q8_0 on
    /// those CPUs, else f32; said on stderr)
    #[arg(long, default_value = "f32", value_name = "REPR", value_parser = Repr::parse_choice)]
    pub repr: Repr,
    /// MiB of keys and values generation may hold: live sequences reserve their prompt and token
    /// budget (one that would exceed it waits for a slot), finished ones are kept for prompts that
    /// extend them (an episode's next turn, a group's shared prompt) until the space is needed
    #[arg(long, env = KV_BUDGET_ENV, default_value_t = DEFAULT_KV_BUDGET_MIB, value_name = "MIB")]
    pub kv_budget: usize,
}

/// Environment variable for `--kv-budget`.
pub const KV_BUDGET_ENV: &str = "SPADE_KV_BUDGET";
/// `--kv-budget`'s default, MiB.
pub const DEFAULT_KV_BUDGET_MIB: usize = crate::model::DEFAULT_KV_BUDGET >> 20;

impl Default for ModelArgs {
    fn default() -> Self {
        ModelArgs { model: None, device: "cpu".into(), threads: None, temperature: 1.0, repr: Repr::F32, kv_budget: DEFAULT_KV_BUDGET_MIB }
    }
}

impl ModelArgs {
    /// The model path these options name.
    pub fn model_path(&self) -> PathBuf {
        self.model.clone().unwrap_or_else(default_model_path)
    }

    pub fn device(&self) -> Result<Device> {
        parse_device(&self.device)
    }

    /// Sampling at `--temperature` with a stage's nucleus, top-k, token budget and slots, stopping
    /// at the end of the turn.
    pub fn sampling(&self, top_p: f32, top_k: usize, max_new_tokens: usize, slots: usize) -> crate::SamplingParams {
        crate::SamplingParams {
            temperature: self.temperature,
            top_p,
            top_k,
            max_new_tokens,
            stop: Vec::new(),
            stop_on_eos: true,
            max_batch: slots.max(1),
        }
    }

    /// Record in a stage's configuration (a JSON object) what it sampled with: the resolved model
    /// path, the temperature and the weight representation.
    pub fn record_sampling(&self, config: &mut serde_json::Value) {
        if let Some(o) = config.as_object_mut() {
            o.insert("model".into(), self.model_path().display().to_string().into());
            o.insert("temperature".into(), self.temperature.into());
            o.insert("repr".into(), self.repr.to_string().into());
        }
    }

    /// Apply `--threads`, load the model for generation: its inference representation built,
    /// `--kv-budget` set and finished sequences' keys and values kept across calls (the weights
    /// do not change in a generating stage).
    pub fn load(&self) -> Result<Model> {
        if let Some(n) = self.threads {
            set_threads(n);
        }
        let device = self.device()?;
        let mut m = crate::load::load(&self.model_path(), &device)?;
        m.set_inference_repr(self.repr)?;
        m.set_kv_budget(self.kv_budget.saturating_mul(1 << 20));
        m.set_prefix_cache(true);
        Ok(m)
    }

    /// [`ModelArgs::load`], then the generator: the model itself, or with `--server` the server
    /// serving it (connected and checked; [`crate::server::ServerArgs::generator`]).
    #[cfg(feature = "server")]
    pub fn load_generator(&self, server: &crate::server::ServerArgs) -> Result<Box<dyn Generator>> {
        server.generator(self.load()?)
    }

    /// Load for training: f32 only, no inference copy.
    pub fn load_for_training(&self) -> Result<Model> {
        if let Some(n) = self.threads {
            set_threads(n);
        }
        crate::load::load(&self.model_path(), &self.device()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        model: ModelArgs,
    }

    #[test]
    fn flags_parse() {
        let c =
            Cli::try_parse_from(["x", "--model", "m.gguf", "--device", "cpu", "--threads", "2", "--temperature", "0.6", "--repr", "f32"]).unwrap();
        assert_eq!(c.model.model_path(), PathBuf::from("m.gguf"));
        assert_eq!((c.model.threads, c.model.temperature, c.model.repr), (Some(2), 0.6, Repr::F32));
        assert!(c.model.device().unwrap().is_cpu());
        let d = Cli::try_parse_from(["x"]).unwrap();
        assert_eq!(d.model.repr, Repr::F32);
        // auto: q8_0 where the Q8_0 product has integer dot-product instructions, else f32.
        let auto = Cli::try_parse_from(["x", "--repr", "auto"]).unwrap();
        assert_eq!(auto.model.repr, Repr::fastest());
        let want = if crate::kernels::isa().integer_dot() { Repr::Q8_0 } else { Repr::F32 };
        assert_eq!(auto.model.repr, want);
        assert_eq!(Cli::try_parse_from(["x", "--repr", "q4_1"]).unwrap().model.repr, Repr::Q4_1);
        assert!(Cli::try_parse_from(["x", "--repr", "q2_k"]).is_err());
        let bad = Cli::try_parse_from(["x", "--device", "gpu"]).unwrap();
        assert!(bad.model.device().is_err());
    }

    #[test]
    fn tiny_folder_loads_through_the_options() {
        let dir = tempfile::tempdir().unwrap();
        crate::write_tiny_model(dir.path(), 3, crate::TinySpec::default()).unwrap();
        let args = ModelArgs { model: Some(dir.path().to_path_buf()), repr: Repr::Q8_0, ..Default::default() };
        let m = args.load().unwrap();
        assert_eq!(m.inference_repr(), Repr::Q8_0);
        assert_eq!(m.config().num_hidden_layers, 2);
        let bad = ModelArgs { model: Some(dir.path().join("missing.gguf")), ..Default::default() };
        assert!(bad.load().unwrap_err().to_string().contains("no such model"));
    }

    /// Without `--server` the generator is the embedded model, loaded as [`ModelArgs::load`] loads
    /// it; with one, the server is reached after the model loads (a missing model fails first).
    #[cfg(feature = "server")]
    #[test]
    fn the_generator_is_the_model_or_its_server() {
        use crate::server::ServerArgs;
        let dir = tempfile::tempdir().unwrap();
        crate::write_tiny_model(dir.path(), 3, crate::TinySpec::default()).unwrap();
        let args = ModelArgs { model: Some(dir.path().to_path_buf()), repr: Repr::Q8_0, ..Default::default() };
        let g = args.load_generator(&ServerArgs::default()).unwrap();
        assert_eq!(g.model().inference_repr(), Repr::Q8_0);
        assert!(g.engine_stats().is_some(), "the embedded model reports its engine");
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let down = ServerArgs { server: Some(format!("http://127.0.0.1:{port}/v1#m").parse().unwrap()), server_retries: 0, ..Default::default() };
        let e = args.load_generator(&down).err().unwrap().to_string();
        assert!(e.contains("unreachable"), "{e}");
        let missing = ModelArgs { model: Some(dir.path().join("missing.gguf")), ..Default::default() };
        let e = missing.load_generator(&down).err().unwrap().to_string();
        assert!(e.contains("no such model"), "{e}");
    }
}
