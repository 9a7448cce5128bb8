//! What the episode loop needs from a model.

use std::sync::Mutex;

use spade_model::{ChatTemplate, FinishReason, Generation, GenerationRequest, Generator, Model, SamplingParams};

use crate::Result;

/// A policy: a tokenizer and chat template (a model's, by default), and batched generation.
pub trait Policy {
    /// The model whose tokenizer, chat template and context length the policy speaks.
    fn model(&self) -> &Model;
    fn chat_template(&self) -> &ChatTemplate {
        self.model().chat_template()
    }
    /// Encode text (special tokens written in it are recognised, except those `hide` marked;
    /// nothing is added).
    fn encode(&self, text: &str) -> Result<Vec<u32>> {
        Ok(self.model().tokenizer().encode(text, false)?)
    }
    /// Mark text as data: the special-token strings in it encode as plain text.
    fn hide(&self, text: &str) -> String {
        self.model().tokenizer().hide_special(text)
    }
    /// Decode ids, special tokens kept.
    fn decode(&self, ids: &[u32]) -> Result<String> {
        Ok(self.model().tokenizer().decode(ids, false)?)
    }
    /// Prompt + completion tokens the model can hold.
    fn context_length(&self) -> usize {
        self.model().context_length()
    }
    /// Continue every prompt (each until an end-of-turn token, or `max_new_tokens`, or the
    /// context length). One call for the whole batch.
    fn generate(&self, requests: &[GenerationRequest], max_new_tokens: usize) -> Result<Vec<Generation>>;
}

/// A model's generator sampling with fixed parameters: the embedded `spade_model::Model`, or a
/// server serving it (`spade_model::ServedModel`).
pub struct ModelPolicy<'a> {
    pub model: &'a dyn Generator,
    pub params: SamplingParams,
}

impl Policy for ModelPolicy<'_> {
    fn model(&self) -> &Model {
        self.model.model()
    }
    fn generate(&self, requests: &[GenerationRequest], max_new_tokens: usize) -> Result<Vec<Generation>> {
        let p = SamplingParams { max_new_tokens, ..self.params.clone() };
        Ok(self.model.generate(requests, &p)?)
    }
}

/// Replies chosen by a function of the prompt text (decoded, special tokens kept) — a scripted
/// agent for tests. Replies are encoded with the model's tokenizer and end with its first
/// end-of-turn token; log-probs are 0. Every prompt it saw is kept in `prompts`.
pub struct ScriptedPolicy<'a> {
    pub model: &'a Model,
    pub reply: Box<dyn Fn(&str) -> String + Send + Sync + 'a>,
    pub prompts: Mutex<Vec<String>>,
}

impl<'a> ScriptedPolicy<'a> {
    pub fn new(model: &'a Model, reply: impl Fn(&str) -> String + Send + Sync + 'a) -> Self {
        ScriptedPolicy { model, reply: Box::new(reply), prompts: Mutex::new(Vec::new()) }
    }
}

impl Policy for ScriptedPolicy<'_> {
    fn model(&self) -> &Model {
        self.model
    }
    fn generate(&self, requests: &[GenerationRequest], max_new_tokens: usize) -> Result<Vec<Generation>> {
        let eos = self.model.eos_ids().first().copied();
        let mut out = Vec::with_capacity(requests.len());
        for r in requests {
            let prompt = self.decode(&r.prompt)?;
            let text = (self.reply)(&prompt);
            self.prompts.lock().unwrap_or_else(|e| e.into_inner()).push(prompt);
            let mut tokens = self.encode(&text)?;
            let budget = max_new_tokens.min(self.context_length().saturating_sub(r.prompt.len()));
            let finish = if tokens.len() < budget {
                tokens.extend(eos);
                if eos.is_some() {
                    FinishReason::Eos
                } else {
                    FinishReason::Length
                }
            } else {
                tokens.truncate(budget);
                FinishReason::Length
            };
            let text = self.model.tokenizer().decode(&tokens[..tokens.len() - usize::from(finish == FinishReason::Eos)], false)?;
            out.push(Generation { logprobs: vec![0.0; tokens.len()], tokens, text, finish });
        }
        Ok(out)
    }
}
