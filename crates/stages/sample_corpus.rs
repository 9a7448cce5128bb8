//! `spade-sample-corpus`: draw grounding documents from corpus shards.
//!
//! Reads any number of corpus shards (Parquet or JSONL files, folders, globs, `-` for JSONL on
//! stdin) with columns `id`, `text` and optional `domain`, `source` (other names mappable by
//! flags), and writes a `docs` table: `--n` documents, or a per-domain `--mix`, chosen by seeded
//! bottom-k sampling in one streaming pass (memory bounded by the sample, not the corpus), each
//! cut to `--max-words` words. Other corpus columns are carried through. Each `--round` of a run
//! draws the next documents of the run's seeded order (rounds 0 and 1 alike); a document comes
//! back only once the corpus (or its domain) is used up.

#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use arrow::array::{Array, ArrayRef, StringArray};
use arrow::datatypes::DataType;
use clap::Parser;
use serde::Serialize;
use spade_cli::Common;
use spade_corpus::{ColumnNames, CorpusBatch, Quota, SampleConfig, Sampler};
use spade_io::{TableReader, TableWriter, WriteMeta};
use spade_schema::DOCS;

const EXAMPLES: &str = "\
Examples:
  spade-sample-corpus data/corpus -o docs.parquet --n 16 --seed 7
  spade-sample-corpus 'shards/*.parquet' -o docs.jsonl --mix math=10,science=5,code=15
  cat corpus.jsonl | spade-sample-corpus - -o - --n 3 --text-col body --id-col url";

/// Draw grounding documents from corpus shards into a `docs` table.
#[derive(Debug, Parser, Serialize)]
#[command(name = "spade-sample-corpus", version, about, long_about = None, after_help = EXAMPLES)]
struct Args {
    /// Corpus shards: Parquet/JSONL files, folders of them, globs, or - (JSONL on stdin).
    #[arg(required = true, value_name = "CORPUS")]
    corpus: Vec<String>,

    /// Output table (.parquet or .jsonl; - writes JSONL to stdout).
    #[arg(short, long, value_name = "FILE")]
    output: String,

    /// Number of documents to draw from the whole corpus [default: 16].
    #[arg(long, conflicts_with = "mix")]
    n: Option<usize>,

    /// Documents per domain, e.g. math=10,science=5,code=15 (rows of other domains are skipped).
    #[arg(long, value_name = "DOMAIN=N,...")]
    mix: Option<String>,

    /// Cut each document after this many words (the default fits the embedded model's prompt budget).
    #[arg(long, default_value_t = 400)]
    max_words: usize,

    /// When the corpus (or a domain of the mix) has fewer documents than asked, take them all
    /// instead of failing.
    #[arg(long)]
    allow_short: bool,

    /// Corpus column holding the document id.
    #[arg(long, default_value = "id", value_name = "NAME")]
    id_col: String,

    /// Corpus column holding the text.
    #[arg(long, default_value = "text", value_name = "NAME")]
    text_col: String,

    /// Corpus column holding the domain (optional in the corpus).
    #[arg(long, default_value = "domain", value_name = "NAME")]
    domain_col: String,

    /// Corpus column holding the source (optional; the shard's file name otherwise).
    #[arg(long, default_value = "source", value_name = "NAME")]
    source_col: String,

    #[command(flatten)]
    common: Common,
}

fn main() -> ExitCode {
    spade_cli::main(|a: &Args| &a.common, run)
}

fn run(args: Args) -> anyhow::Result<()> {
    let start = Instant::now();
    let quota = match &args.mix {
        Some(m) => m.parse::<Quota>().map_err(|e| anyhow::anyhow!("--mix {e}"))?,
        None => Quota::Total(args.n.unwrap_or(16)),
    };
    if args.max_words == 0 {
        bail!("--max-words must be at least 1");
    }
    let names =
        ColumnNames { id: args.id_col.clone(), text: args.text_col.clone(), domain: args.domain_col.clone(), source: args.source_col.clone() };
    let reader = TableReader::open(&args.corpus)?;
    reader.require(&[(names.id.as_str(), DataType::Utf8), (names.text.as_str(), DataType::Utf8)])?;
    let total = reader.num_rows() as u64;
    let pb = args.common.progress(Some(total), "sampling");
    let mut sampler = Sampler::new(SampleConfig {
        seed: args.common.seed,
        round: args.common.round,
        quota,
        max_words: args.max_words,
        allow_short: args.allow_short,
        names,
    });
    for batch in reader {
        let b = batch?;
        let ids = b.required(&args.id_col, &DataType::Utf8)?;
        b.column(&args.text_col, &DataType::Utf8)?;
        let domains = b.opt_column(&args.domain_col, &DataType::Utf8)?;
        let strings = |a: &ArrayRef| a.as_any().downcast_ref::<StringArray>().expect("utf8").clone();
        let domains = domains.as_ref().map(strings);
        sampler.push(&CorpusBatch { batch: &b.batch, ids: &strings(&ids), domains: domains.as_ref(), origin: b.origin.clone() })?;
        pb.inc(b.num_rows() as u64);
    }
    pb.finish_and_clear();
    let rows_read = sampler.rows_read();
    let (rows, carried) = sampler.finish()?;
    let base = DOCS.batch(&rows).map_err(anyhow::Error::msg)?;
    let all: Vec<usize> = (0..rows.len()).collect();
    let docs = spade_io::widen(&base, &[], Some((&carried, &all)))?;
    let config = spade_cli::config_json(&args);
    let meta =
        WriteMeta { table: "docs".into(), seed: Some(args.common.seed), config: Some(config.clone()), tool: Some("spade-sample-corpus".into()) };
    let mut w = TableWriter::create(&args.output, docs.schema(), &meta)?;
    w.write(&docs)?;
    let n = w.finish().with_context(|| format!("writing {}", args.output))?;
    tracing::info!("sampled {n} of {rows_read} documents into {}", args.output);
    args.common.metrics(
        "spade-sample-corpus",
        serde_json::json!({"rows_read": rows_read, "docs": n, "seconds": start.elapsed().as_secs_f64(), "config": config}),
    )?;
    Ok(())
}
