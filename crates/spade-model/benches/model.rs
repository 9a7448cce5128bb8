//! Model bench: prefill tok/s (512-token prompt), single-stream decode tok/s (128 tokens) and
//! batched decode throughput at batch 8 and 32, for f32, Q8_0 and Q4_1, at 1 and 2 threads (one child
//! process per thread count: candle reads its thread count once), on the generation engine and
//! on the static decoder it replaced (same run, ratios written); plus llama.cpp's single-stream
//! figures on the same model file and `decode_ratio_vs_llama_cpp`: its `llama-bench` when
//! `SPADE_LLAMA_BENCH` names it (`make bench` passes the one `scripts/llama-server.sh` builds), else
//! llama-cpp-python from the cached venv, else `.cache/llama-server/bin/llama-bench`.
//! Our figures are taken once per kernel level this CPU runs (`SPADE_ISA` set in each child:
//! AVX-512, AVX2 forced down, scalar), each against the same llama.cpp figures, and the CPU's model
//! name and features are recorded beside them. Writes target/bench/model.json.
//!
//! Run: `cargo bench -p spade-model --bench model` (env: SPADE_MODEL, SPADE_LLAMA_PYTHON,
//! SPADE_LLAMA_BENCH, SPADE_BENCH_THREADS="1,2", SPADE_BENCH_ISAS="avx512,avx2,scalar" (default:
//! every level this CPU runs), SPADE_BENCH_QUICK=1 for a short run).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use candle_core::Device;
use serde_json::{json, Value};
use spade_model::kernels::{Isa, ISA_ENV};
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

/// Seconds to generate `new` tokens after each prompt (distinct seeds), on the engine or the
/// static decoder.
fn timed(m: &Model, repr: Repr, prompts: &[Vec<u32>], new: usize, engine: bool) -> f64 {
    let reqs: Vec<GenerationRequest> = prompts.iter().enumerate().map(|(i, p)| GenerationRequest { prompt: p.clone(), seed: i as u64 }).collect();
    let params = SamplingParams { temperature: 1.0, max_new_tokens: new, stop_on_eos: false, max_batch: prompts.len(), ..Default::default() };
    let t0 = Instant::now();
    let out = if engine { m.generate_repr(repr, &reqs, &params) } else { m.generate_static(repr, &reqs, &params) }.unwrap();
    assert!(out.iter().all(|g| g.tokens.len() == new));
    t0.elapsed().as_secs_f64()
}

fn figures(m: &Model, repr: Repr, engine: bool, quick: bool) -> Value {
    let long = prompt_ids(m, PREFILL);
    let short = long[..32].to_vec();
    timed(m, repr, std::slice::from_ref(&short), 2, engine); // warm-up
    let t_prefill = (0..2).map(|_| timed(m, repr, std::slice::from_ref(&long), 1, engine)).fold(f64::MAX, f64::min);
    let t1 = timed(m, repr, std::slice::from_ref(&short), 1, engine);
    let tn = timed(m, repr, std::slice::from_ref(&short), DECODE + 1, engine);
    let decode = DECODE as f64 / (tn - t1);
    let mut r = json!({ "prefill_tok_s": PREFILL as f64 / t_prefill, "decode_tok_s": decode });
    for b in if quick { vec![8] } else { vec![8, 32] } {
        // Distinct prompts (the engine would share an identical one).
        let ps: Vec<Vec<u32>> = (0..b).map(|i| long[i..i + 32].to_vec()).collect();
        let t1 = timed(m, repr, &ps, 1, engine);
        let tn = timed(m, repr, &ps, DECODE + 1, engine);
        let thr = (b * DECODE) as f64 / (tn - t1);
        r[format!("batch{b}_decode_tok_s")] = json!(thr);
        r[format!("batch{b}_vs_single")] = json!(thr / decode);
    }
    r
}

fn child(model: &Path) -> Value {
    let mut m = load(model, &Device::Cpu).unwrap();
    let quick = std::env::var("SPADE_BENCH_QUICK").is_ok_and(|v| v == "1");
    let mut out = serde_json::Map::new();
    for repr in [Repr::F32, Repr::Q8_0, Repr::Q4_1] {
        m.set_inference_repr(repr).unwrap();
        let engine = figures(&m, repr, true, quick);
        eprintln!("  {repr} engine: {engine}");
        let fixed = figures(&m, repr, false, quick);
        eprintln!("  {repr} static: {fixed}");
        let mut ratio = serde_json::Map::new();
        for (k, v) in engine.as_object().unwrap() {
            if k.ends_with("_tok_s") {
                ratio.insert(k.replace("_tok_s", "_engine_vs_static"), json!(v.as_f64().unwrap() / fixed[k].as_f64().unwrap()));
            }
        }
        out.insert(repr.to_string(), json!({ "engine": engine, "static": fixed, "ratios": ratio }));
    }
    Value::Object(out)
}

/// llama.cpp's single-stream figures from its `llama-bench` tool: prefill of PREFILL tokens and
/// decode of DECODE tokens, best of two repetitions' means.
fn llama_bench_figures(bin: &Path, model: &Path, threads: usize) -> Result<Value, String> {
    let o = Command::new(bin)
        .args(["-m", &model.display().to_string(), "-t", &threads.to_string(), "-p", &PREFILL.to_string(), "-n", &DECODE.to_string()])
        .args(["-r", "2", "-o", "json"])
        .output()
        .map_err(|e| e.to_string())?;
    if !o.status.success() {
        return Err(String::from_utf8_lossy(&o.stderr).into_owned());
    }
    let rows: Vec<Value> = serde_json::from_slice(&o.stdout).map_err(|e| e.to_string())?;
    let mut res = json!({ "threads": threads, "tool": "llama-bench", "note": "Q4_1 GGUF as shipped, portable AVX2 build" });
    for r in rows {
        let ts = r["avg_ts"].as_f64().unwrap_or(0.0);
        if r["n_prompt"].as_u64().unwrap_or(0) > 0 {
            res["prefill_tok_s"] = json!(ts);
        } else {
            res["decode_tok_s"] = json!(ts);
        }
    }
    Ok(res)
}

/// The CPU's model name and the features the kernels and llama.cpp's builds care about.
fn cpu() -> Value {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let field = |name: &str| info.lines().find(|l| l.starts_with(name)).and_then(|l| l.split_once(':')).map(|(_, v)| v.trim().to_string());
    let flags = field("flags").unwrap_or_default();
    let wanted = ["avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "amx_int8"];
    let have: Vec<&str> = wanted.into_iter().filter(|w| flags.split_whitespace().any(|f| f == *w)).collect();
    json!({
        "model": field("model name"),
        "features": have,
        "arch": std::env::consts::ARCH,
        "detected_level": Isa::detected().name(),
    })
}

fn llama_bench_bin() -> Option<PathBuf> {
    let p = std::env::var("SPADE_LLAMA_BENCH").map(PathBuf::from).unwrap_or_else(|_| repo_root().join(".cache/llama-server/bin/llama-bench"));
    p.exists().then_some(p)
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
    // An explicit llama-bench (as `make bench` passes) wins over the llama-cpp-python venv.
    let llama = if std::env::var_os("SPADE_LLAMA_BENCH").is_some() { None } else { llama_python() };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/llama_bench.py");
    let isas: Vec<Isa> = match std::env::var("SPADE_BENCH_ISAS") {
        Ok(v) => v
            .split(',')
            .map(|n| n.trim())
            .filter(|n| !n.is_empty())
            .map(|n| {
                let isa = Isa::ALL.into_iter().find(|i| i.name() == n).unwrap_or_else(|| panic!("SPADE_BENCH_ISAS: unknown level {n}"));
                assert!(isa.supported(), "SPADE_BENCH_ISAS: this CPU does not run {n}");
                isa
            })
            .collect(),
        Err(_) => Isa::runnable().into_iter().rev().collect(),
    };
    let mut results = serde_json::Map::new();
    for &t in &threads {
        let mut ours = serde_json::Map::new();
        for &isa in &isas {
            eprintln!("bench: {t} thread(s), kernels {}", isa.name());
            let o = Command::new(&exe).arg("--child").env("RAYON_NUM_THREADS", t.to_string()).env(ISA_ENV, isa.name()).output().unwrap();
            assert!(o.status.success(), "child failed: {}", String::from_utf8_lossy(&o.stderr));
            ours.insert(isa.name().into(), serde_json::from_slice(&o.stdout).unwrap());
        }
        let mut entry = json!({ "spade": ours });
        let peer: Result<Value, String> = if let Some(py) = &llama {
            Command::new(py)
                .arg(&script)
                .arg(&model)
                .arg(t.to_string())
                .arg(&tmp)
                .arg(DECODE.to_string())
                .env_remove("OPENBLAS_CORETYPE")
                .output()
                .map_err(|e| e.to_string())
                .and_then(|o| {
                    if o.status.success() {
                        serde_json::from_slice(&o.stdout).map_err(|e| e.to_string())
                    } else {
                        Err(String::from_utf8_lossy(&o.stderr).into_owned())
                    }
                })
        } else if let Some(bin) = llama_bench_bin() {
            llama_bench_figures(&bin, &model, t)
        } else {
            Err("no llama.cpp peer (scripts/llama-server.sh builds llama-bench)".into())
        };
        match peer {
            Ok(l) => {
                eprintln!("  llama.cpp: {l}");
                let mut ratios = serde_json::Map::new();
                for &isa in &isas {
                    let mut per = serde_json::Map::new();
                    for repr in ["f32", "q8_0", "q4_1"] {
                        let s = &entry["spade"][isa.name()][repr]["engine"];
                        per.insert(
                            repr.into(),
                            json!({
                                "prefill_vs_llama_cpp": s["prefill_tok_s"].as_f64().unwrap() / l["prefill_tok_s"].as_f64().unwrap(),
                                "decode_ratio_vs_llama_cpp": s["decode_tok_s"].as_f64().unwrap() / l["decode_tok_s"].as_f64().unwrap(),
                            }),
                        );
                    }
                    ratios.insert(isa.name().into(), Value::Object(per));
                }
                entry["llama_cpp"] = l;
                entry["ratios"] = Value::Object(ratios);
            }
            Err(e) => eprintln!("  llama.cpp: skipped ({e})"),
        }
        results.insert(format!("threads_{t}"), entry);
    }
    let _ = std::fs::remove_file(&tmp);
    let doc = json!({
        "model": model.display().to_string(),
        "cpu": cpu(),
        "prefill_tokens": PREFILL,
        "decode_tokens": DECODE,
        "results": results,
        "targets": "batch-32 decode ≥ 300 tok/s at 2 threads; single-stream decode ≥ 0.8× llama.cpp on the same file",
    });
    let target = std::env::var("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|_| repo_root().join("target"));
    let out = target.join("bench/model.json");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    std::fs::write(&out, serde_json::to_string_pretty(&doc).unwrap() + "\n").unwrap();
    eprintln!("bench: wrote {}", out.display());
    println!("{}", serde_json::to_string_pretty(&doc).unwrap());
}
