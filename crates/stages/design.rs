//! `spade-design`: Write candidate environments (code + privileged hint) grounded on documents, conditioned on the environment memory.
//!
//! Not implemented yet: the stage parses its flags (so `--help` shows the contract) and exits 2.

use std::process::ExitCode;

use clap::Parser;
use serde::Serialize;
use spade_cli::Common;

const EXAMPLES: &str = "\
Examples:
  spade-design --model models/smollm2.gguf --docs docs.parquet --memory memory.parquet -o candidates.parquet --per-doc 4";

/// Write candidate environments (code + privileged hint) grounded on documents, conditioned on the environment memory.
#[derive(Debug, Parser, Serialize)]
#[command(name = "spade-design", version, about, long_about = None, after_help = EXAMPLES)]
struct Args {
    #[command(flatten)]
    model: spade_cli::ModelFlags,

    /// Documents to ground on (a `docs` table).
    #[arg(long, value_name = "FILE")]
    docs: Vec<String>,

    /// Environment memory: examples and negatives for the prompt.
    #[arg(long, value_name = "FILE")]
    memory: Vec<String>,

    /// Output `candidates` table.
    #[arg(short, long, value_name = "FILE")]
    output: String,

    /// Designer samples per document (a designer group needs at least 2).
    #[arg(long, default_value_t = 4)]
    per_doc: usize,

    /// games or tool-use.
    #[arg(long, default_value = "games")]
    setting: String,

    /// inline (the designer writes the hint) or self (a second call writes it).
    #[arg(long, default_value = "inline")]
    hint: String,

    /// Repair turns after a validation failure.
    #[arg(long, default_value_t = 0)]
    repair: usize,

    /// Prompt without memory examples (ablation).
    #[arg(long)]
    no_memory: bool,

    /// Prompt without a document (ablation).
    #[arg(long)]
    no_corpus: bool,

    #[command(flatten)]
    common: Common,
}

fn main() -> ExitCode {
    let args: Args = spade_cli::parse();
    spade_cli::run(&args.common, || spade_cli::not_implemented("spade-design"))
}
