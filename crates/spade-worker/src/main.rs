//! `spade-sandbox-worker`: the fork server that runs model-written Python for the stages.
//!
//! Not meant to be run by hand: `spade_sandbox::Sandbox` starts it (found next to the
//! stage binary, or through `SPADE_SANDBOX_WORKER`) with a control socket, and it forks one
//! hardened child per environment episode. Its rpath pins the libpython it was built
//! against (see `build.rs`).

#![forbid(unsafe_code)]

fn main() {
    std::process::exit(spade_worker::main());
}
