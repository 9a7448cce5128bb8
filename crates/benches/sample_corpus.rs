//! `make bench`: `spade-sample-corpus` throughput and peak memory over a generated corpus of
//! ≥ 1 GB of text, beside DuckDB's reservoir sample of the same files (the peer) in the same run.
//! Writes `target/bench/sample_corpus.json`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use arrow::array::{ArrayRef, RecordBatch, StringArray};
use rand::{Rng, SeedableRng};

const SHARDS: usize = 16;
const DOCS_PER_SHARD: usize = 33_000;
const WORDS_PER_DOC: usize = 300;

fn bench_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Generates the corpus once (cached): 16 Parquet shards of synthetic text, ≥ 1 GB in all.
fn corpus(dir: &Path) -> u64 {
    let done = dir.join("DONE");
    if let Ok(s) = std::fs::read_to_string(&done) {
        return s.trim().parse().unwrap();
    }
    std::fs::create_dir_all(dir).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let vocab: Vec<String> = (0..5000).map(|_| (0..rng.random_range(2..10)).map(|_| rng.random_range(b'a'..=b'z') as char).collect()).collect();
    let domains = ["math", "science", "code"];
    let mut bytes = 0u64;
    for s in 0..SHARDS {
        let mut ids = Vec::with_capacity(DOCS_PER_SHARD);
        let mut texts = Vec::with_capacity(DOCS_PER_SHARD);
        let mut doms = Vec::with_capacity(DOCS_PER_SHARD);
        for i in 0..DOCS_PER_SHARD {
            let mut t = String::with_capacity(WORDS_PER_DOC * 8);
            for w in 0..WORDS_PER_DOC {
                if w > 0 {
                    t.push(' ');
                }
                t.push_str(&vocab[rng.random_range(0..vocab.len())]);
            }
            bytes += t.len() as u64;
            ids.push(format!("doc-{s}-{i}"));
            texts.push(t);
            doms.push(domains[i % 3]);
        }
        let b = RecordBatch::try_from_iter(vec![
            ("id", Arc::new(StringArray::from(ids)) as ArrayRef),
            ("text", Arc::new(StringArray::from(texts)) as ArrayRef),
            ("domain", Arc::new(StringArray::from(doms)) as ArrayRef),
        ])
        .unwrap();
        let p = dir.join(format!("part-{s:02}.parquet"));
        spade_io::write_batches(p.to_str().unwrap(), b.schema(), &[b], &spade_io::WriteMeta::new("corpus")).unwrap();
    }
    std::fs::write(&done, bytes.to_string()).unwrap();
    bytes
}

/// Runs a command, returning (seconds, peak RSS in MiB) of that child alone (wait4's rusage).
#[allow(clippy::zombie_processes)] // reaped by wait4, which clippy does not see
fn measure(cmd: &mut Command) -> (f64, f64) {
    let t = Instant::now();
    let child = cmd.spawn().expect("spawn");
    let mut status = 0;
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(r, pid, "wait4");
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "{cmd:?} failed");
    (t.elapsed().as_secs_f64(), ru.ru_maxrss as f64 / 1024.0)
}

fn python() -> Option<PathBuf> {
    let p = std::env::var("SPADE_PYTHON").map(PathBuf::from).unwrap_or_else(|_| PathBuf::from(".venv/bin/python"));
    p.exists().then_some(p)
}

fn main() {
    let dir = bench_dir().join("corpus-1g");
    eprintln!("corpus: generating (first run only) in {}", dir.display());
    let bytes = corpus(&dir);
    let gb = bytes as f64 / 1e9;
    let docs = (SHARDS * DOCS_PER_SHARD) as f64;
    let out = bench_dir().join("sample-out.parquet");
    let mut results = serde_json::Map::new();
    for (name, args) in [("n=1000", vec!["--n", "1000"]), ("mix", vec!["--mix", "math=300,science=300,code=400"])] {
        let (secs, rss) = measure(
            Command::new(env!("CARGO_BIN_EXE_spade-sample-corpus"))
                .arg(&dir)
                .args(&args)
                .args(["--seed", "7", "-q", "--progress", "off", "-o"])
                .arg(&out),
        );
        eprintln!("spade {name}: {secs:.2} s, {:.0} MB/s, {:.0} docs/s, peak {rss:.0} MiB", bytes as f64 / 1e6 / secs, docs / secs);
        results.insert(
            format!("spade {name}"),
            serde_json::json!({"seconds": secs, "text_mb_per_s": bytes as f64 / 1e6 / secs, "docs_per_s": docs / secs, "peak_rss_mib": rss}),
        );
    }
    if let Some(py) = python() {
        let sql = format!(
            "import duckdb; duckdb.sql(\"copy (select * from read_parquet('{}/*.parquet') using sample reservoir(1000 rows) repeatable (7)) to '{}' (format parquet)\")",
            dir.display(),
            bench_dir().join("duckdb-out.parquet").display()
        );
        let (secs, rss) = measure(Command::new(&py).arg("-c").arg(&sql));
        eprintln!("duckdb n=1000: {secs:.2} s, peak {rss:.0} MiB");
        let ours = results["spade n=1000"]["seconds"].as_f64().unwrap();
        results.insert(
            "duckdb n=1000".into(),
            serde_json::json!({"seconds": secs, "text_mb_per_s": bytes as f64 / 1e6 / secs, "peak_rss_mib": rss, "spade_speedup": secs / ours}),
        );
    } else {
        eprintln!("duckdb peer skipped: no project Python (run `make venv`)");
    }
    let report = serde_json::json!({"bench": "sample_corpus", "corpus_gb": gb, "docs": docs, "results": results});
    let path = bench_dir().join("sample_corpus.json");
    std::fs::write(&path, serde_json::to_string_pretty(&report).unwrap()).unwrap();
    println!("{}", serde_json::to_string_pretty(&report).unwrap());
    eprintln!("wrote {}", path.display());
}
