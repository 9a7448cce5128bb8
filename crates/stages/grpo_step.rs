//! `spade-grpo-step`: One GRPO update of both roles (agent episodes, delayed designer samples with TIS).
//!
//! Not implemented yet: the stage parses its flags (so `--help` shows the contract) and exits 2.

use std::process::ExitCode;

use clap::Parser;
use serde::Serialize;
use spade_cli::Common;

const EXAMPLES: &str = "\
Examples:
  spade-grpo-step --model ckpt/step-0003 --rollouts rollouts.parquet --candidates candidates.parquet --scores scores.parquet -o ckpt/step-0004";

/// One GRPO update of both roles (agent episodes, delayed designer samples with TIS).
#[derive(Debug, Parser, Serialize)]
#[command(name = "spade-grpo-step", version, about, long_about = None, after_help = EXAMPLES)]
struct Args {
    #[command(flatten)]
    model: spade_cli::ModelFlags,

    /// Agent batch: rollouts tables.
    #[arg(long, value_name = "FILE")]
    rollouts: Vec<String>,

    /// Designer batch: candidates, joined with --scores on candidate_id.
    #[arg(long, value_name = "FILE")]
    candidates: Vec<String>,

    /// Scores of the designer batch.
    #[arg(long, value_name = "FILE")]
    scores: Vec<String>,

    /// Output checkpoint folder.
    #[arg(short, long, value_name = "DIR")]
    output: String,

    /// KL reference model (default: the run's initial model).
    #[arg(long, value_name = "PATH")]
    ref_model: Option<String>,

    /// KL coefficient (0 turns the KL term off).
    #[arg(long, default_value_t = 0.0)]
    kl_coef: f64,

    /// Learning rate.
    #[arg(long, default_value_t = 1e-6)]
    lr: f64,

    #[command(flatten)]
    common: Common,
}

fn main() -> ExitCode {
    let args: Args = spade_cli::parse();
    spade_cli::run(&args.common, || spade_cli::not_implemented("spade-grpo-step"))
}
