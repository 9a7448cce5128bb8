//! Scoring: log-probs of given tokens under the current weights at a temperature — the
//! trainer's primitive (differentiable), plus plain-vector conveniences.

use candle_core::{DType, Tensor, D};

use crate::error::{Error, Result};
use crate::model::{Batch, Model, Repr};

impl Model {
    /// Per-token log-probs of whole sequences, `(batch, max_len)`, aligned one-to-one with the
    /// tokens: entry `[i, t]` is `log softmax(logits / T)[seq_i[t]]` given `seq_i[..t]`; 0 at
    /// `t = 0` and at padding. Differentiable with respect to the weights (f32). T = 0 is
    /// scored as T = 1, as generation reports greedy tokens.
    pub fn token_logprobs(&self, seqs: &[Vec<u32>], temperature: f32) -> Result<Tensor> {
        self.token_logprobs_repr(Repr::F32, seqs, temperature)
    }

    /// [`Model::token_logprobs`] in a chosen representation.
    pub fn token_logprobs_repr(&self, repr: Repr, seqs: &[Vec<u32>], temperature: f32) -> Result<Tensor> {
        if temperature < 0.0 {
            return Err(Error::Invalid("temperature must be ≥ 0".into()));
        }
        let t = if temperature == 0.0 { 1.0 } else { temperature as f64 };
        let batch = Batch::new(seqs, self.tokenizer.pad_id(), false, &self.device)?;
        let (b, s) = batch.input_ids.dims2()?;
        if s < 2 {
            return Ok(Tensor::zeros((b, s), DType::F32, &self.device)?);
        }
        let logits = self.forward_repr(repr, &batch.input_ids, Some(&batch.attention_mask))?;
        let logits = (logits.narrow(1, 0, s - 1)? / t)?;
        let lp = candle_nn::ops::log_softmax(&logits, D::Minus1)?;
        let targets = batch.input_ids.narrow(1, 1, s - 1)?.contiguous()?.unsqueeze(2)?;
        let picked = lp.gather(&targets, 2)?.squeeze(2)?;
        let mask = batch.attention_mask.narrow(1, 1, s - 1)?.to_dtype(DType::F32)?;
        let picked = (picked * mask)?;
        let zero = Tensor::zeros((b, 1), DType::F32, &self.device)?;
        Ok(Tensor::cat(&[&zero, &picked], 1)?)
    }

    /// Log-probs of `completion` after `prompt` (length `completion.len()`), differentiable.
    pub fn score(&self, prompt: &[u32], completion: &[u32], temperature: f32) -> Result<Tensor> {
        if prompt.is_empty() {
            return Err(Error::Invalid("scoring needs at least one prompt token".into()));
        }
        let seq: Vec<u32> = prompt.iter().chain(completion).copied().collect();
        let lp = self.token_logprobs(&[seq], temperature)?;
        Ok(lp.squeeze(0)?.narrow(0, prompt.len(), completion.len())?)
    }

    /// [`Model::score`] as plain numbers.
    pub fn score_vec(&self, prompt: &[u32], completion: &[u32], temperature: f32) -> Result<Vec<f32>> {
        Ok(self.score(prompt, completion, temperature)?.to_vec1::<f32>()?)
    }

    /// Score many (prompt, completion) pairs in one batch; plain numbers, one vector per pair.
    pub fn score_batch(&self, pairs: &[(Vec<u32>, Vec<u32>)], temperature: f32) -> Result<Vec<Vec<f32>>> {
        if pairs.iter().any(|(p, _)| p.is_empty()) {
            return Err(Error::Invalid("scoring needs at least one prompt token".into()));
        }
        let seqs: Vec<Vec<u32>> =
            pairs.iter().map(|(p, c)| p.iter().chain(c).copied().collect()).collect();
        let lp = self.token_logprobs(&seqs, temperature)?.detach().to_vec2::<f32>()?;
        Ok(pairs
            .iter()
            .zip(lp)
            .map(|((p, c), row)| row[p.len()..p.len() + c.len()].to_vec())
            .collect())
    }
}
