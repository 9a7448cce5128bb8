//! The worker binary as the stages meet it: it starts (libpython found through its rpath),
//! refuses to run by hand, and serves an episode to `spade_sandbox::Sandbox`.
//!
//! Also what makes `cargo test --workspace` build `spade-sandbox-worker` beside the stage
//! binaries: cargo builds a package's binaries for its integration tests.

use std::path::PathBuf;
use std::process::Command;

use spade_sandbox::{Sandbox, SandboxConfig};

fn worker() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_spade-sandbox-worker"))
}

#[test]
fn starts_and_names_its_version() {
    let out = Command::new(worker()).arg("--version").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("spade-sandbox-worker {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn run_by_hand_it_says_who_starts_it() {
    let out = Command::new(worker()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs --ctrl-fd and --scratch-root"));
    let out = Command::new(worker()).arg("--bogus").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown argument --bogus"));
}

#[test]
fn serves_an_episode() {
    let sb = Sandbox::new(SandboxConfig { worker: Some(worker()), ..Default::default() }).expect("sandbox starts");
    assert!(sb.layers().fork_server, "{:?}", sb.layers());
    let code = "class E:\n def reset(self, seed=None): return 'hi %d' % seed, {}\n def step(self, a): return 'bye', 1.0, True, False, {'a': a}\n";
    let (mut ep, info) = sb.open_env(code, None).unwrap();
    assert_eq!(info.class_name, "E");
    assert_eq!(ep.reset(7).unwrap().observation, "hi 7");
    let s = ep.step("\\boxed{1}").unwrap();
    assert_eq!((s.reward, s.terminated, s.info["a"].as_str()), (1.0, true, Some("\\boxed{1}")));
    assert_eq!(ep.close().code, Some(0));
}
