//! Helpers shared by the integration tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use assert_cmd::Command;

/// The rows of a small CSV file's text (no quoted fields), each a map from header to field.
pub fn csv_maps(text: &str) -> Vec<std::collections::BTreeMap<&str, &str>> {
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    lines.map(|l| head.iter().copied().zip(l.split(',')).collect()).collect()
}

/// The stage binaries, in pipeline order.
pub const STAGES: &[&str] =
    &["spade-sample-corpus", "spade-design", "spade-validate", "spade-rollout", "spade-regret", "spade-grpo-step", "spade-eval", "spade-sft"];

/// A command for one of this package's binaries, with a clean environment for spade's variables
/// (and the sandbox worker built beside it, see [`worker`]).
pub fn stage(name: &str) -> Command {
    worker();
    let mut c = Command::cargo_bin(name).unwrap_or_else(|e| panic!("binary {name}: {e}"));
    for (k, _) in std::env::vars() {
        if k.starts_with("SPADE_") && k != "SPADE_PYTHON" {
            c.env_remove(k);
        }
    }
    c.env_remove("RUST_LOG");
    c
}

/// A fresh temp folder.
pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// Repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Writes JSON lines to a file.
pub fn write_jsonl(path: &Path, rows: &[serde_json::Value]) {
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// Reads a JSONL file into values.
pub fn read_jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path).unwrap().lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// A corpus of `n` documents per domain, `words` words each, as JSON rows.
pub fn corpus_rows(domains: &[(&str, usize)], words: usize) -> Vec<serde_json::Value> {
    let mut rows = Vec::new();
    for (d, n) in domains {
        for i in 0..*n {
            let text: Vec<String> = (0..words).map(|w| format!("{d}{i}w{w}")).collect();
            rows.push(serde_json::json!({"id": format!("{d}-{i}"), "text": text.join(" "), "domain": d, "source": "test"}));
        }
    }
    rows
}

/// Files in a folder (names), sorted.
pub fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string()).collect();
    v.sort();
    v
}

/// The project's Python (with pyarrow and duckdb), as set up by the Makefile.
pub fn python() -> PathBuf {
    if let Ok(p) = std::env::var("SPADE_PYTHON") {
        return PathBuf::from(p);
    }
    let venv = root().join(".venv/bin/python");
    assert!(venv.exists(), "the project's Python environment is missing: run `make venv` (or `make test`, which does it)");
    venv
}

/// A tiny random model folder (seed `seed`) whose context is widened to `ctx` tokens (designer
/// prompts with an example environment are a few thousand byte-level tokens).
pub fn tiny_model(dir: &Path, seed: u64, ctx: usize) -> PathBuf {
    spade_model::write_tiny_model(dir, seed, spade_model::TinySpec { context: ctx, ..Default::default() }).unwrap();
    dir.to_path_buf()
}

/// A tmpfs mounted at `dir` with `opts` (`size=1m`, …), unmounted when the guard drops; `None`
/// where this process may not mount (not root, no CAP_SYS_ADMIN): the caller says so and checks
/// nothing.
pub fn mount_tmpfs(dir: &Path, opts: &str) -> Option<Tmpfs> {
    std::fs::create_dir_all(dir).unwrap();
    let ok = std::process::Command::new("mount").args(["-t", "tmpfs", "-o", opts, "tmpfs"]).arg(dir).status().is_ok_and(|s| s.success());
    ok.then(|| Tmpfs(dir.to_path_buf()))
}

/// A mounted tmpfs (see [`mount_tmpfs`]).
pub struct Tmpfs(PathBuf);

impl Tmpfs {
    /// `mount -o remount,OPTS` (`ro`, `size=64m`, …).
    pub fn remount(&self, opts: &str) {
        let st = std::process::Command::new("mount").args(["-o", &format!("remount,{opts}")]).arg(&self.0).status().unwrap();
        assert!(st.success(), "remount,{opts} of {} failed", self.0.display());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

/// The folder holding this package's binaries as `cargo test` built them, and the sandbox worker
/// (see [`worker`]).
pub fn bin_dir() -> PathBuf {
    worker().parent().unwrap().to_path_buf()
}

/// The sandbox worker, `spade-sandbox-worker`, beside the stage binaries (where they look for it).
/// It is the binary of the `spade-worker` package, not of this one, so `cargo test -p spade` does
/// not build it: built here once per test run, with the profile and target folder of this test
/// binary (a no-op when `cargo test --workspace` built it already).
pub fn worker() -> PathBuf {
    static WORKER: OnceLock<PathBuf> = OnceLock::new();
    WORKER
        .get_or_init(|| {
            let dir = assert_cmd::cargo::cargo_bin("spade-design").parent().unwrap().to_path_buf();
            let profile = match dir.file_name().and_then(|n| n.to_str()) {
                Some("debug") => "dev",
                Some(p) => p,
                None => panic!("no profile folder in {}", dir.display()),
            };
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let out = std::process::Command::new(cargo)
                .args(["build", "--quiet", "-p", "spade-worker", "--bin", spade_sandbox::WORKER_BIN, "--profile", profile])
                .arg("--target-dir")
                .arg(dir.parent().unwrap())
                .arg("--manifest-path")
                .arg(root().join("Cargo.toml"))
                .output()
                .expect("running cargo to build the sandbox worker");
            assert!(out.status.success(), "cargo build -p spade-worker failed:\n{}", String::from_utf8_lossy(&out.stderr));
            let worker = dir.join(spade_sandbox::WORKER_BIN);
            assert!(worker.is_file(), "cargo build -p spade-worker left no {}", worker.display());
            worker
        })
        .clone()
}
