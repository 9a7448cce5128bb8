//! The sandbox worker (`spade-sandbox-worker`): a fork server with CPython initialised
//! (embedded with pyo3).
//!
//! Started by [`spade_sandbox::Sandbox`] as `spade-sandbox-worker --ctrl-fd N --scratch-root DIR
//! [--netns auto|off]`; it never holds a model or an output file. The fork-server loop and
//! the per-job episode server are Python (`driver.py`, embedded); the hardening is Rust
//! ([`spade_sandbox::harden`]), handed to the driver as a function. Its own crate so that only
//! this binary compiles and links pyo3: the stages and `spade-sandbox` (the client) do not.

#![forbid(unsafe_code)]

use std::ffi::CString;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use spade_sandbox::harden::{self, ChildConfig};

const DRIVER: &str = include_str!("driver.py");

/// The worker's file-system view ([`harden::private_view`]), once Python knows what it reads;
/// returns how it went, for the layers line.
#[pyfunction]
fn spade_private_view(scratch_root: &str, keep: Vec<String>) -> String {
    match harden::private_view(std::path::Path::new(scratch_root), &keep) {
        Ok(()) => "read-only root, private /tmp".to_string(),
        Err(e) => format!("no private view: {e}"),
    }
}

#[pyfunction]
fn spade_harden(cfg: &str) -> PyResult<String> {
    let cfg: ChildConfig = serde_json::from_str(cfg).map_err(|e| PyRuntimeError::new_err(format!("bad child config: {e}")))?;
    let report = harden::apply(&cfg).map_err(PyRuntimeError::new_err)?;
    Ok(serde_json::to_string(&report).unwrap_or_default())
}

/// Entry point of the worker binary; returns the exit code.
pub fn main() -> i32 {
    let args: Vec<String> = std::env::args().collect();
    let mut ctrl_fd: Option<i32> = None;
    let mut scratch_root: Option<String> = None;
    let mut netns = "auto".to_string();
    let mut i = 1;
    while i < args.len() {
        let val = args.get(i + 1).cloned();
        match args[i].as_str() {
            "--ctrl-fd" => ctrl_fd = val.and_then(|v| v.parse().ok()),
            "--scratch-root" => scratch_root = val,
            "--netns" => netns = val.unwrap_or_default(),
            "--version" => {
                println!("spade-sandbox-worker {}", env!("CARGO_PKG_VERSION"));
                return 0;
            }
            other => {
                eprintln!("spade-sandbox-worker: unknown argument {other} (this program is started by spade stages)");
                return 2;
            }
        }
        i += 2;
    }
    let (Some(ctrl_fd), Some(scratch_root)) = (ctrl_fd, scratch_root) else {
        eprintln!("spade-sandbox-worker: needs --ctrl-fd and --scratch-root (it is started by spade stages)");
        return 2;
    };
    let mut netns = if netns == "off" { "off".to_string() } else { harden::enter_namespaces() };
    if netns.starts_with("pid+") {
        // this process stays outside and waits; what follows runs as the namespace's init
        match harden::pid_init(ctrl_fd) {
            Ok(proc) => netns = format!("{}; {proc})", netns.trim_end_matches(')')),
            Err(e) => {
                eprintln!("spade-sandbox-worker: cannot start the PID namespace's first process: {e}");
                return 1;
            }
        }
    }
    let hello = serde_json::json!({
        "scratch_root": scratch_root,
        "layers": {
            "seccomp": harden::seccomp_available(),
            "landlock_abi": harden::landlock_abi(),
            "netns": netns,
            "rlimits": true,
        },
        "worker_pid": std::process::id(),
    });
    Python::initialize();
    let res: PyResult<()> = Python::attach(|py| {
        let code = CString::new(DRIVER).expect("driver has no NUL");
        let module = PyModule::from_code(py, &code, c"spade_driver.py", c"spade_driver")?;
        let harden_fn = wrap_pyfunction!(spade_harden, py)?;
        let view_fn = wrap_pyfunction!(spade_private_view, py)?;
        module.getattr("worker_main")?.call1((ctrl_fd, harden_fn, hello.to_string(), view_fn))?;
        Ok(())
    });
    match res {
        Ok(()) => 0,
        Err(e) => {
            Python::attach(|py| e.print(py));
            1
        }
    }
}
