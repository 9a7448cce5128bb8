//! What generates: the [`Generator`] trait, one entry point for every backend.
//!
//! - The embedded model: [`Model`] itself, on its inference representation through the engine
//!   ([`crate::engine`]).
//! - A completions server serving the same model: `ServedModel` (the `server` feature,
//!   `crate::server`), which keeps a loaded [`Model`] for its tokenizer, chat template,
//!   end-of-turn ids and context length.
//!
//! What needs the weights themselves (scoring, the log-probs of truncated importance sampling,
//! training) stays on [`Model`]; a generator only continues prompts. A stage loading from the
//! command line gets a `Box<dyn Generator>` (`ModelArgs::load_generator`, the `cli` and `server`
//! features) and reaches the model through [`Generator::model`].

use crate::error::Result;
use crate::generate::{Generation, GenerationRequest, SamplingParams};
use crate::kv::EngineStats;
use crate::model::Model;

/// Continues prompts given as token ids: the embedded model or a server serving it.
pub trait Generator: Send + Sync {
    /// The model whose tokenizer, chat template, end-of-turn ids and context length the
    /// generations speak (a server's: the served model, loaded here).
    fn model(&self) -> &Model;

    /// Continue every prompt, calling `done(n)` as sequences finish; results in request order.
    fn generate_with_progress(&self, requests: &[GenerationRequest], params: &SamplingParams, done: &mut dyn FnMut(usize))
        -> Result<Vec<Generation>>;

    /// Continue every prompt; results in request order.
    fn generate(&self, requests: &[GenerationRequest], params: &SamplingParams) -> Result<Vec<Generation>> {
        self.generate_with_progress(requests, params, &mut |_| {})
    }

    /// The engine's counters when generation runs on the embedded engine; None for a server.
    fn engine_stats(&self) -> Option<EngineStats> {
        None
    }
}

impl Generator for Model {
    fn model(&self) -> &Model {
        self
    }

    fn generate_with_progress(
        &self,
        requests: &[GenerationRequest],
        params: &SamplingParams,
        done: &mut dyn FnMut(usize),
    ) -> Result<Vec<Generation>> {
        Model::generate_with_progress(self, requests, params, done)
    }

    fn engine_stats(&self) -> Option<EngineStats> {
        Some(Model::engine_stats(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_model_generates_as_its_own_methods_do() {
        let m = crate::tiny_model(7, crate::TinySpec::default(), &candle_core::Device::Cpu).unwrap();
        let prompt = m.tokenizer().encode("the cat", false).unwrap();
        let reqs: Vec<GenerationRequest> = (0..3).map(|seed| GenerationRequest { prompt: prompt.clone(), seed }).collect();
        let p = SamplingParams { max_new_tokens: 5, ..Default::default() };
        let g: &dyn Generator = &m;
        assert!(std::ptr::eq(g.model(), &m));
        let mut done = 0;
        let out = g.generate_with_progress(&reqs, &p, &mut |n| done += n).unwrap();
        assert_eq!(done, 3);
        assert_eq!(out, m.generate(&reqs, &p).unwrap());
        assert_eq!(g.generate(&reqs, &p).unwrap(), out);
        assert!(g.engine_stats().is_some());
    }
}
