//! `spade-eval`: Evaluate a model on held-out suites, scored by each benchmark's own verifier.
//!
//! Not implemented yet: the stage parses its flags (so `--help` shows the contract) and exits 2.

use std::process::ExitCode;

use clap::Parser;
use serde::Serialize;
use spade_cli::Common;

const EXAMPLES: &str = "\
Examples:
  spade-eval --model models/smollm2.gguf --suite rg,humaneval -o eval.parquet --n 5";

/// Evaluate a model on held-out suites, scored by each benchmark's own verifier.
#[derive(Debug, Parser, Serialize)]
#[command(name = "spade-eval", version, about, long_about = None, after_help = EXAMPLES)]
struct Args {
    #[command(flatten)]
    model: spade_cli::ModelFlags,

    /// Suites: rg, rg:math, rg:algorithmic, rg:cognition, rg:logic, humaneval, math500, aime24, aime25, bfcl-mt.
    #[arg(long, value_delimiter = ',', required = true)]
    suite: Vec<String>,

    /// Output per-item table.
    #[arg(short, long, value_name = "FILE")]
    output: String,

    /// Items per task.
    #[arg(long, default_value_t = 10)]
    n: usize,

    /// Samples per item (avg@k / pass@k).
    #[arg(long, default_value_t = 1)]
    samples: usize,

    /// Evaluate a deterministic 1/N slice of the items.
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,

    #[command(flatten)]
    common: Common,
}

fn main() -> ExitCode {
    let args: Args = spade_cli::parse();
    spade_cli::run(&args.common, || spade_cli::not_implemented("spade-eval"))
}
