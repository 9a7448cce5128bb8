//! `spade-rollout`: Play every environment of the active pool with and without the hint, kept as tokens end to end.
//!
//! Not implemented yet: the stage parses its flags (so `--help` shows the contract) and exits 2.

use std::process::ExitCode;

use clap::Parser;
use serde::Serialize;
use spade_cli::Common;

const EXAMPLES: &str = "\
Examples:
  spade-rollout --model models/smollm2.gguf --envs envs.parquet --memory memory.parquet --pool 8 -o rollouts.parquet --group 4";

/// Play every environment of the active pool with and without the hint, kept as tokens end to end.
#[derive(Debug, Parser, Serialize)]
#[command(name = "spade-rollout", version, about, long_about = None, after_help = EXAMPLES)]
struct Args {
    #[command(flatten)]
    model: spade_cli::ModelFlags,

    /// New environments (an `envs` table).
    #[arg(long, value_name = "FILE")]
    envs: Vec<String>,

    /// Environment memory, source of the rest of the active pool.
    #[arg(long, value_name = "FILE")]
    memory: Vec<String>,

    /// Environments taken from the memory besides the new ones.
    #[arg(long, default_value_t = 8)]
    pool: usize,

    /// Output `rollouts` table.
    #[arg(short, long, value_name = "FILE")]
    output: String,

    /// Episodes per environment and arm.
    #[arg(long, default_value_t = 4)]
    group: usize,

    /// Arms to play.
    #[arg(long, default_value = "hint,nohint")]
    arms: String,

    /// Turn limit per episode.
    #[arg(long, default_value_t = 8)]
    max_turns: usize,

    /// Agent step within the round.
    #[arg(long, default_value_t = 0)]
    step: u64,

    /// Play a deterministic 1/N slice of the environments (I from 0, as Slurm array indices).
    #[arg(long, value_name = "I/N")]
    shard: Option<String>,

    #[command(flatten)]
    common: Common,
}

fn main() -> ExitCode {
    let args: Args = spade_cli::parse();
    spade_cli::run(&args.common, || spade_cli::not_implemented("spade-rollout"))
}
