//! Model bench: prefill tok/s (512-token prompt), decode tok/s (128 tokens), batched decode
//! throughput at batch 8 and 32, for f32 and Q8_0, at 1 and 2 threads (one child process per
//! thread count: candle reads its thread count once), plus llama.cpp single-stream figures
//! (llama-cpp-python from the cached venv) measured in the same run, and the ratios.
//! Writes target/bench/model.json.
//!
//! Run: `cargo bench -p spade-model --bench model` (env: SPADE_MODEL, SPADE_LLAMA_PYTHON,
//! SPADE_BENCH_THREADS="1,2", SPADE_BENCH_QUICK=1 for a short run).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use candle_core::Device;
use serde_json::{json, Value};
use spade_model::{default_model_path, load, GenerationRequest, Model, Repr, SamplingParams};

const PREFILL: usize = 512;
const DECODE: usize = 128;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn prompt_ids(m: &Model, n: usize) -> Vec<u32> {
    let text = "The environment designer reads a document and writes a Python class with reset and step. \
                The agent plays it for several turns, once with a hint and once without; the regret is the \
                difference of their mean returns. ";
    let mut ids = Vec::new();
    while ids.len() < n {
        ids.extend(m.tokenizer().encode(text, false).unwrap());
    }
    ids.truncate(n);
    ids
}

fn timed(m: &Model, repr: Repr, prompts: &[Vec<u32>], new: usize) -> f64 {
    let reqs: Vec<GenerationRequest> = prompts.iter().enumerate().map(|(i, p)| GenerationRequest { prompt: p.clone(), seed: i as u64 }).collect();
    let params = SamplingParams { temperature: 1.0, max_new_tokens: new, stop_on_eos: false, max_batch: prompts.len(), ..Default::default() };
    let t0 = Instant::now();
    let out = m.generate_repr(repr, &reqs, &params).unwrap();
    assert!(out.iter().all(|g| g.tokens.len() == new));
    t0.elapsed().as_secs_f64()
}

fn child(model: &Path) -> Value {
    let mut m = load(model, &Device::Cpu).unwrap();
    let quick = std::env::var("SPADE_BENCH_QUICK").is_ok_and(|v| v == "1");
    let mut out = serde_json::Map::new();
    for repr in [Repr::F32, Repr::Q8_0] {
        m.set_inference_repr(repr).unwrap();
        let long = prompt_ids(&m, PREFILL);
        let short = long[..32].to_vec();
        timed(&m, repr, &[short.clone()], 2); // warm-up
        let t_prefill = (0..2).map(|_| timed(&m, repr, &[long.clone()], 1)).fold(f64::MAX, f64::min);
        let t1 = timed(&m, repr, &[short.clone()], 1);
        let tn = timed(&m, repr, &[short.clone()], DECODE + 1);
        let decode = DECODE as f64 / (tn - t1);
        let mut r = json!({
            "prefill_tok_s": PREFILL as f64 / t_prefill,
            "decode_tok_s": decode,
        });
        for b in if quick { vec![8] } else { vec![8, 32] } {
            let ps = vec![short.clone(); b];
            let t1 = timed(&m, repr, &ps, 1);
            let tn = timed(&m, repr, &ps, DECODE + 1);
            let thr = (b * DECODE) as f64 / (tn - t1);
            r[format!("batch{b}_decode_tok_s")] = json!(thr);
            r[format!("batch{b}_vs_single")] = json!(thr / decode);
        }
        eprintln!("  {repr}: {r}");
        out.insert(repr.to_string(), r);
    }
    Value::Object(out)
}

fn llama_python() -> Option<PathBuf> {
    let p = std::env::var("SPADE_LLAMA_PYTHON").map(PathBuf::from).unwrap_or_else(|_| repo_root().join(".cache/llama-cpp-venv/bin/python"));
    p.exists().then_some(p)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let model = default_model_path();
    if args.iter().any(|a| a == "--child") {
        println!("{}", child(&model));
        return;
    }
    if !model.exists() {
        eprintln!("bench: default model missing at {} (run scripts/fetch-model.sh)", model.display());
        std::process::exit(2);
    }
    let threads: Vec<usize> =
        std::env::var("SPADE_BENCH_THREADS").unwrap_or_else(|_| "1,2".into()).split(',').filter_map(|s| s.trim().parse().ok()).collect();
    let exe = std::env::current_exe().unwrap();
    let tmp = std::env::temp_dir().join(format!("spade-bench-prompt-{}.json", std::process::id()));
    {
        let m = load(&model, &Device::Cpu).unwrap();
        std::fs::write(&tmp, serde_json::to_string(&prompt_ids(&m, PREFILL)).unwrap()).unwrap();
    }
    let llama = llama_python();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/llama_bench.py");
    let mut results = serde_json::Map::new();
    for &t in &threads {
        eprintln!("bench: {t} thread(s)");
        let o = Command::new(&exe).arg("--child").env("RAYON_NUM_THREADS", t.to_string()).output().unwrap();
        assert!(o.status.success(), "child failed: {}", String::from_utf8_lossy(&o.stderr));
        let ours: Value = serde_json::from_slice(&o.stdout).unwrap();
        let mut entry = json!({ "spade": ours });
        if let Some(py) = &llama {
            let o = Command::new(py)
                .arg(&script)
                .arg(&model)
                .arg(t.to_string())
                .arg(&tmp)
                .arg(DECODE.to_string())
                .env_remove("OPENBLAS_CORETYPE")
                .output()
                .unwrap();
            if o.status.success() {
                let l: Value = serde_json::from_slice(&o.stdout).unwrap();
                eprintln!("  llama.cpp: {l}");
                let mut ratios = serde_json::Map::new();
                for repr in ["f32", "q8_0"] {
                    let s = &entry["spade"][repr];
                    ratios.insert(
                        repr.into(),
                        json!({
                            "prefill_vs_llama_cpp": s["prefill_tok_s"].as_f64().unwrap() / l["prefill_tok_s"].as_f64().unwrap(),
                            "decode_vs_llama_cpp": s["decode_tok_s"].as_f64().unwrap() / l["decode_tok_s"].as_f64().unwrap(),
                        }),
                    );
                }
                entry["llama_cpp"] = l;
                entry["ratios"] = Value::Object(ratios);
            } else {
                eprintln!("  llama.cpp bench failed: {}", String::from_utf8_lossy(&o.stderr));
            }
        } else {
            eprintln!("  llama.cpp: no venv (crates/spade-model/scripts/llama-cpp-venv.sh builds it); skipped");
        }
        results.insert(format!("threads_{t}"), entry);
    }
    let _ = std::fs::remove_file(&tmp);
    let doc = json!({
        "model": model.display().to_string(),
        "prefill_tokens": PREFILL,
        "decode_tokens": DECODE,
        "results": results,
        "targets": "decode ≥ 1.0× llama.cpp per thread, prefill ≥ 2×, batch-32 throughput ≥ 5× single stream",
    });
    let target = std::env::var("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|_| repo_root().join("target"));
    let out = target.join("bench/model.json");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    std::fs::write(&out, serde_json::to_string_pretty(&doc).unwrap() + "\n").unwrap();
    eprintln!("bench: wrote {}", out.display());
    println!("{}", serde_json::to_string_pretty(&doc).unwrap());
}
