//! The model's checks on a GPU, run by `scripts/gpu-check.sh` (build with `--features cuda`).
//!
//!   gpu_check forward  --model PATH [--device cuda:0] [--tol 1e-3]
//!       logits of the same prompts on the CPU and on the device: the largest difference, relative
//!       to the largest logit, must be at most --tol, and the top token must agree at >= 99% of
//!       positions; prints one JSON line, exit 1 when it fails
//!   gpu_check generate --model PATH [--device cuda:0] [--batch 8] [--new 128]
//!       one batch of sampled sequences (no stop at EOS), timed after a short warm-up; prints one
//!       JSON line with tokens/s
//!
//!   gpu_check tiny --out DIR [--seed 7] [--context N]
//!       the tests' tiny random model as a Hugging Face folder (its context widened to N tokens:
//!       the designer's prompts are a few thousand byte-level tokens)
//!   gpu_check config [--model PATH] --out DIR
//!       the model's config.json and tokenizer files, without weights (what random weights of its
//!       shape are made from: `scripts/gpu_check.py random`)
//!
//! A bad argument or a model that does not load is one line on stderr, exit 2.

use std::process::ExitCode;
use std::time::Instant;

use spade_model::candle_core::{DType, Device, Tensor};
use spade_model::{load, parse_device, GenerationRequest, Message, Model, SamplingParams};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("gpu_check: {e}");
            ExitCode::from(2)
        }
    }
}

struct Opts {
    model: String,
    device: String,
    tol: f64,
    batch: usize,
    new: usize,
    out: String,
    seed: u64,
    context: Option<usize>,
}

fn opts(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts { model: String::new(), device: "cuda:0".into(), tol: 1e-3, batch: 8, new: 128, out: String::new(), seed: 7, context: None };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = || it.next().cloned().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--model" => o.model = val()?,
            "--device" => o.device = val()?,
            "--tol" => o.tol = val()?.parse().map_err(|e| format!("--tol: {e}"))?,
            "--batch" => o.batch = val()?.parse().map_err(|e| format!("--batch: {e}"))?,
            "--new" => o.new = val()?.parse().map_err(|e| format!("--new: {e}"))?,
            "--out" => o.out = val()?,
            "--seed" => o.seed = val()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--context" => o.context = Some(val()?.parse().map_err(|e| format!("--context: {e}"))?),
            _ => return Err(format!("unknown argument {a:?}")),
        }
    }
    Ok(o)
}

fn run(args: &[String]) -> Result<bool, String> {
    let (cmd, rest) = args.split_first().ok_or("usage: gpu_check forward|generate --model PATH [...]")?;
    let o = opts(rest)?;
    if cmd == "tiny" || cmd == "config" {
        let out = std::path::Path::new(&o.out);
        if o.out.is_empty() {
            return Err(format!("{cmd}: --out is required"));
        }
        if cmd == "tiny" {
            let mut spec = spade_model::TinySpec::default();
            spec.context = o.context.unwrap_or(spec.context);
            spade_model::write_tiny_model(out, o.seed, spec).map_err(|e| format!("--out {}: {e}", o.out))?;
        } else {
            let path = if o.model.is_empty() { spade_model::default_model_path() } else { o.model.clone().into() };
            let m = load(&path, &Device::Cpu).map_err(|e| format!("--model {}: {e}", path.display()))?;
            spade_model::save_hf_folder(&m, out).map_err(|e| format!("--out {}: {e}", o.out))?;
            let weights = out.join("model.safetensors");
            std::fs::remove_file(&weights).map_err(|e| format!("{}: {e}", weights.display()))?;
        }
        println!("{}", serde_json::json!({"check": cmd, "ok": true, "out": o.out}));
        return Ok(true);
    }
    if o.model.is_empty() {
        return Err("--model is required".into());
    }
    let device = parse_device(&o.device).map_err(|e| e.to_string())?;
    let load_on = |d: &Device| load(std::path::Path::new(&o.model), d).map_err(|e| format!("--model {}: {e}", o.model));
    match cmd.as_str() {
        "forward" => forward(&load_on(&Device::Cpu)?, &load_on(&device)?, o.tol).map_err(|e| e.to_string()),
        "generate" => generate(&load_on(&device)?, &o).map(|()| true).map_err(|e| e.to_string()),
        _ => Err(format!("unknown command {cmd:?} (forward | generate)")),
    }
}

/// Prompts of different content and one length (no padding to tell apart).
fn prompts(m: &Model) -> spade_model::Result<Vec<Vec<u32>>> {
    let texts = [
        "Write a Python class with reset and step methods for a number-guessing game.",
        "What is 17 times 23? Think step by step, then answer in \\boxed{}.",
        "Name three prime numbers larger than one hundred.",
        "Explain in one sentence why the sky is blue.",
    ];
    let mut out = Vec::new();
    for t in texts {
        out.push(m.encode_chat(&[Message::user(t)], true)?);
    }
    let n = out.iter().map(Vec::len).min().unwrap_or(0);
    Ok(out.into_iter().map(|p| p[..n].to_vec()).collect())
}

fn forward(cpu: &Model, dev: &Model, tol: f64) -> spade_model::Result<bool> {
    let seqs = prompts(cpu)?;
    let (b, n) = (seqs.len(), seqs[0].len());
    let flat: Vec<u32> = seqs.concat();
    let t = Instant::now();
    let a = cpu.forward(&Tensor::from_vec(flat.clone(), (b, n), &Device::Cpu)?, None)?.to_dtype(DType::F32)?;
    let cpu_s = t.elapsed().as_secs_f64();
    let ids = Tensor::from_vec(flat, (b, n), dev.device())?;
    dev.forward(&ids, None)?; // first call: kernels load
    dev.device().synchronize()?;
    let t = Instant::now();
    let g = dev.forward(&ids, None)?;
    dev.device().synchronize()?;
    let dev_s = t.elapsed().as_secs_f64();
    let g = g.to_device(&Device::Cpu)?.to_dtype(DType::F32)?;
    let (av, gv) = (a.flatten_all()?.to_vec1::<f32>()?, g.flatten_all()?.to_vec1::<f32>()?);
    let scale = av.iter().fold(0f64, |m, x| m.max(x.abs() as f64)).max(1.0);
    let max_abs = av.iter().zip(&gv).fold(0f64, |m, (x, y)| m.max((x - y).abs() as f64));
    let vocab = av.len() / (b * n);
    let argmax = |v: &[f32]| v.iter().enumerate().fold((0, f32::MIN), |best, (i, &x)| if x > best.1 { (i, x) } else { best }).0;
    let agree = av.chunks(vocab).zip(gv.chunks(vocab)).filter(|(x, y)| argmax(x) == argmax(y)).count();
    let positions = b * n;
    let ok = max_abs / scale <= tol && agree as f64 >= 0.99 * positions as f64 && gv.iter().all(|x| x.is_finite());
    println!(
        "{}",
        serde_json::json!({
            "check": "forward", "ok": ok, "batch": b, "tokens": n, "vocab": vocab,
            "max_abs_diff": max_abs, "max_abs_logit": scale, "relative": max_abs / scale, "tolerance": tol,
            "top1_agree": agree, "positions": positions, "cpu_s": cpu_s, "device_s": dev_s,
        })
    );
    Ok(ok)
}

fn generate(m: &Model, o: &Opts) -> spade_model::Result<()> {
    let base = prompts(m)?;
    let reqs: Vec<GenerationRequest> = (0..o.batch).map(|i| GenerationRequest { prompt: base[i % base.len()].clone(), seed: i as u64 + 1 }).collect();
    let params = |n: usize| SamplingParams { max_new_tokens: n, stop_on_eos: false, max_batch: o.batch.max(1), ..SamplingParams::default() };
    m.generate(&reqs[..1], &params(4))?; // warm-up: kernels load, buffers grow
    m.device().synchronize()?;
    let t = Instant::now();
    let out = m.generate(&reqs, &params(o.new))?;
    m.device().synchronize()?;
    let secs = t.elapsed().as_secs_f64();
    let tokens: usize = out.iter().map(|g| g.tokens.len()).sum();
    println!(
        "{}",
        serde_json::json!({
            "check": "generate", "ok": tokens > 0, "device": o.device, "batch": o.batch, "new_tokens": o.new,
            "prompt_tokens": base[0].len(), "tokens": tokens, "seconds": secs, "tokens_per_s": tokens as f64 / secs,
            "sample": out.first().map(|g| g.text.chars().take(80).collect::<String>()),
        })
    );
    Ok(())
}
