//! Decode throughput of the engine on the default model, for profiling one path:
//! `cargo run --release -p spade-model --example decode -- [REPR] [BATCH] [TOKENS] [PROMPT]`
//! (`PROMPT` > 0: prompts of that many tokens, for profiling prefill with `TOKENS` = 1)
//! (`SPADE_ISA` picks the kernel level, `RAYON_NUM_THREADS` the threads).
use candle_core::Device;
use spade_model::{default_model_path, load, GenerationRequest, Repr, SamplingParams};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let repr: Repr = args.get(1).map_or("q8_0", |s| s.as_str()).parse().unwrap();
    let batch: usize = args.get(2).map_or(1, |s| s.parse().unwrap());
    let new: usize = args.get(3).map_or(256, |s| s.parse().unwrap());
    let mut m = load(&default_model_path(), &Device::Cpu).unwrap();
    m.set_inference_repr(repr).unwrap();
    let prompt: usize = args.get(4).map_or(0, |s| s.parse().unwrap());
    let mut ids = m.tokenizer().encode("The environment designer reads a document and writes a Python class with reset and step.", false).unwrap();
    if prompt > 0 {
        ids = ids.iter().copied().cycle().take(prompt + 4).collect();
    }
    let reqs: Vec<GenerationRequest> = (0..batch).map(|i| GenerationRequest { prompt: ids[i % 4..].to_vec(), seed: i as u64 }).collect();
    let params = SamplingParams { temperature: 1.0, max_new_tokens: new, stop_on_eos: false, max_batch: batch, ..Default::default() };
    let t0 = std::time::Instant::now();
    m.generate_repr(repr, &reqs, &params).unwrap();
    let s = t0.elapsed().as_secs_f64();
    println!("{repr} batch {batch}: {:.1} tok/s ({:.2} s)", (batch * new) as f64 / s, s);
}
