//! Integration tests: one module per stage, driving the real binaries (assert_cmd) and the
//! libraries on tiny inputs in temp folders.

mod util;

mod cli;
mod crash;
mod design;
mod eval;
mod foreign;
mod gpu;
mod grpo;
mod house;
mod io;
mod python;
mod readme;
mod regret;
mod rollout;
mod round;
mod sample_corpus;
mod sandbox;
mod server;
mod sft;
mod slurm;
mod validate;
