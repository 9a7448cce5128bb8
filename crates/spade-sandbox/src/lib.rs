//! Runs model-written Python environments in hardened, forked worker processes (episode API).
//!
//! Untrusted code never runs in the calling process. [`Sandbox::new`] starts `jobs` worker
//! processes (`spade-sandbox-worker`, a Rust binary embedding CPython, built by the
//! `spade-worker` crate so that this client does not link pyo3): fork servers that hold no
//! model and no output. Each episode is one child forked from a worker; the child detaches
//! (`setsid`), applies rlimits, `oom_score_adj` 1000, landlock (read-only system, read-write
//! scratch folder) when the kernel has it, and a seccomp filter (no fork/exec; no signals, limits or
//! scheduling of other processes; no sockets made, bound or connected; no System V or POSIX
//! message IPC; no change to any file's metadata, …), then loads the environment and serves calls as JSON
//! lines over a socket of its own. Its stdout/stderr go to a capped pipe. Wall-clock deadlines
//! are enforced from here with SIGKILL. Workers live in fresh network, IPC, UTS and mount namespaces
//! (everything read-only but their scratch folders; fresh `/tmp`, `/var/tmp`, `/dev/shm`) when the
//! host allows it.
//!
//! ```no_run
//! use spade_sandbox::{Sandbox, SandboxConfig};
//! let sb = Sandbox::new(SandboxConfig::default()).unwrap();
//! let code = "class E:\n def reset(self, seed=None): return 'hi', {}\n def step(self, a): return 'bye', 1.0, True, False, {}\n";
//! let (mut ep, _info) = sb.open_env(code, None).unwrap();
//! let r = ep.reset(7).unwrap();
//! let s = ep.step("\\boxed{1}").unwrap();
//! assert_eq!((r.observation.as_str(), s.reward), ("hi", 1.0));
//! ```
//!
//! The worker binary is found through [`WORKER_ENV`], else next to the running executable
//! (or its parent folder, for `cargo test`'s `deps/`): a workspace build (`cargo build
//! --workspace`) puts it beside the stage binaries.

pub mod harden;
mod sys;
pub mod validate;

use std::fmt;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Environment variable naming the worker binary (overrides the search next to the executable).
pub const WORKER_ENV: &str = "SPADE_SANDBOX_WORKER";
/// Environment variable that lets a sandbox run without all its layers (`--allow-weak-sandbox`).
pub const ALLOW_WEAK_ENV: &str = "SPADE_ALLOW_WEAK_SANDBOX";
/// File name of the worker binary.
pub const WORKER_BIN: &str = "spade-sandbox-worker";

/// Errors of the sandbox itself (not of the code it runs).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("sandbox worker binary not found (set {WORKER_ENV} or build `{WORKER_BIN}`: cargo build -p spade-worker)")]
    WorkerNotFound,
    #[error("sandbox worker: {0}")]
    Worker(String),
    #[error("sandbox: mandatory layer unavailable on this host: {0}")]
    Unsupported(String),
    #[error("sandbox: {0} on this host, so model-written code would run with a weaker boundary; refusing (pass --allow-weak-sandbox, or set {ALLOW_WEAK_ENV}=1, to run it anyway)")]
    Weak(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The outcome class of one call. Every call answers exactly one.
pub use spade_schema::Status;

/// A call that did not answer `ok`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallError {
    pub status: Status,
    /// One line: the exception (`ValueError: …`), the limit hit, the signal.
    pub message: String,
    /// Python traceback for `exception` / `memory`.
    pub traceback: Option<String>,
    /// Where it happened: `syntax`, `load`, `interface`, `init`, `reset`, `step`, `close`, `call`.
    pub phase: Option<String>,
}

impl CallError {
    fn new(status: Status, message: impl Into<String>) -> Self {
        CallError { status, message: message.into(), traceback: None, phase: None }
    }
    fn phase(mut self, p: &str) -> Self {
        if self.phase.is_none() {
            self.phase = Some(p.to_string());
        }
        self
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.phase {
            Some(p) => write!(f, "{} in {}: {}", self.status, p, self.message),
            None => write!(f, "{}: {}", self.status, self.message),
        }
    }
}

impl std::error::Error for CallError {}

pub type CallResult<T> = Result<T, CallError>;

/// Per-episode limits. Times are wall-clock, enforced from outside with SIGKILL.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Limits {
    /// Compile, exec and instantiate the environment.
    pub load_timeout: Duration,
    /// One `reset` or `step` (or one `call`).
    pub call_timeout: Duration,
    /// Address space (RLIMIT_AS), bytes.
    pub memory_bytes: u64,
    /// CPU time for the whole episode (RLIMIT_CPU), seconds.
    pub cpu_seconds: u64,
    /// Largest file the child may write (RLIMIT_FSIZE), bytes.
    pub file_size_bytes: u64,
    /// Open file descriptors (RLIMIT_NOFILE).
    pub open_files: u64,
    /// stdout + stderr bytes before the episode is killed as `output_too_large`.
    pub output_bytes: usize,
    /// Largest single JSON answer (observation + info) before `output_too_large`.
    pub result_bytes: usize,
    /// Rewards outside `[lo, hi]` answer `invalid_result`.
    pub reward_range: (f64, f64),
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            load_timeout: Duration::from_secs(10),
            call_timeout: Duration::from_secs(5),
            memory_bytes: 1 << 30,
            cpu_seconds: 60,
            file_size_bytes: 16 << 20,
            open_files: 64,
            output_bytes: 1 << 20,
            result_bytes: 4 << 20,
            reward_range: (-10.0, 10.0),
        }
    }
}

/// How to start a [`Sandbox`].
#[derive(Clone, Debug)]
pub struct SandboxConfig {
    /// Worker processes (fork servers). Episodes are independent of workers: one worker can
    /// serve many concurrent episodes; more workers spread the forking.
    pub jobs: usize,
    pub limits: Limits,
    /// Worker binary; default: [`WORKER_ENV`], then next to the current executable.
    pub worker: Option<PathBuf>,
    /// Parent of the per-job scratch folders; default: the system temp folder.
    pub scratch_root: Option<PathBuf>,
    /// Use landlock when the kernel has it.
    pub landlock: bool,
    /// Put workers in fresh network, IPC, UTS and mount namespaces (a read-only view with private
    /// temp folders) when possible.
    pub netns: bool,
    /// Run even where a layer is missing (landlock, the namespaces); otherwise [`Sandbox::new`]
    /// refuses with [`Error::Weak`]. Default: the environment variable [`ALLOW_WEAK_ENV`] is set
    /// (to anything but `0`).
    pub allow_weak: bool,
    /// Folders put on the workers' `PYTHONPATH` (read-only to their children, as every path their
    /// Python reads): packages that environments import, e.g. the venv's site-packages for
    /// foreign environments' adapters or the evaluation's scorers.
    pub python_path: Vec<PathBuf>,
    /// Modules the workers import once at start-up (trusted packages environments import, e.g.
    /// `reasoning_gym` for foreign environments), so an episode does not pay for the import.
    pub preload: Vec<String>,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        let allow_weak = std::env::var(ALLOW_WEAK_ENV).is_ok_and(|v| !v.is_empty() && v != "0");
        SandboxConfig {
            jobs: 1,
            limits: Limits::default(),
            worker: None,
            scratch_root: None,
            landlock: true,
            netns: true,
            allow_weak,
            python_path: Vec::new(),
            preload: Vec::new(),
        }
    }
}

/// Hardening layers active on this host (probed by the first worker at start-up).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Layers {
    pub fork_server: bool,
    pub rlimits: bool,
    pub seccomp: bool,
    /// Kernel landlock ABI (0: none).
    pub landlock_abi: i64,
    /// Whether children use landlock (ABI > 0 and enabled). Without it, seccomp forbids all
    /// file creation and modification instead.
    pub landlock: bool,
    /// The workers' namespaces and file-system view: `pid+net+ipc+uts+mnt (unshare; own /proc;
    /// read-only root, private /tmp)`, `… (userns; …)`, `net+…` without a PID namespace, `off`
    /// or `unavailable (…)`.
    pub namespaces: String,
    pub python: String,
}

impl Layers {
    /// What is missing of the full boundary (landlock, the namespaces), if anything.
    pub fn missing(&self) -> Option<String> {
        let mut gone = Vec::new();
        if !self.landlock {
            gone.push(if self.landlock_abi > 0 { "landlock is off".to_string() } else { "the kernel has no landlock".to_string() });
        }
        let ns = self.namespaces.strip_prefix("pid+");
        if !ns.unwrap_or(&self.namespaces).starts_with("net+") {
            gone.push(format!("no network, IPC, UTS and mount namespaces ({})", self.namespaces));
        } else if ns.is_none() {
            gone.push(format!("no PID namespace ({})", self.namespaces));
        } else if !self.namespaces.contains("own /proc") {
            gone.push(format!("no /proc of the PID namespace's own ({})", self.namespaces));
        } else if !self.namespaces.contains("read-only root") {
            gone.push(format!("no read-only, private file-system view ({})", self.namespaces));
        }
        (!gone.is_empty()).then(|| gone.join(" and "))
    }
}

impl fmt::Display for Layers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "fork-server={} rlimits={} seccomp={} landlock={} namespaces={} python={}",
            self.fork_server,
            self.rlimits,
            self.seccomp,
            if self.landlock { format!("on (abi {})", self.landlock_abi) } else { format!("off (abi {})", self.landlock_abi) },
            self.namespaces,
            self.python
        )
    }
}

/// How an episode child ended.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ExitInfo {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    /// Killed by us (deadline, output cap, close).
    pub killed: bool,
}

/// Answer of a successful `load`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadInfo {
    /// The environment class found.
    pub class_name: String,
    /// Classes defining reset and step (before keeping the most derived).
    pub n_classes: i64,
    pub reset_takes_seed: bool,
    /// A tool environment: it defines `get_tools` and `execute_tool`.
    pub tool_env: bool,
    /// Child-side set-up times in ms (`prepare_ms`, `harden_ms`, `load_ms`), for diagnostics.
    #[serde(skip)]
    pub timings: Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResetOut {
    pub observation: String,
    pub info: Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepOut {
    pub observation: String,
    pub reward: f64,
    pub terminated: bool,
    pub truncated: bool,
    pub info: Value,
}

struct WorkerProc {
    child: Child,
    ctrl: OwnedFd,
    generation: u64,
}

impl WorkerProc {
    fn request(&self, req: &Value, fds: &[i32], timeout: Duration) -> std::io::Result<Value> {
        self.request_fds(req, fds, timeout).map(|(v, _)| v)
    }

    /// A request whose reply may carry file descriptors (a spawned child's pidfd).
    fn request_fds(&self, req: &Value, fds: &[i32], timeout: Duration) -> std::io::Result<(Value, Vec<OwnedFd>)> {
        sys::send_msg(&self.ctrl, req.to_string().as_bytes(), fds)?;
        let (reply, fds) = sys::recv_msg_fds(&self.ctrl, Instant::now() + timeout)?;
        let v = serde_json::from_slice(&reply).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        Ok((v, fds))
    }

    fn shutdown(mut self) {
        drop(self.ctrl);
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => return,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return;
                }
            }
        }
    }
}

struct Inner {
    cfg: SandboxConfig,
    worker_path: PathBuf,
    scratch_root: PathBuf,
    /// Held (locked) while this sandbox lives; the lock goes with the process, killed or not.
    _scratch_lock: std::fs::File,
    slots: Vec<Mutex<Option<WorkerProc>>>,
    next: AtomicUsize,
    generation: AtomicU64,
    layers: Layers,
}

impl Inner {
    fn spawn_worker(&self, index: usize) -> Result<(WorkerProc, Value), Error> {
        spawn_worker(&self.worker_path, &self.scratch_root.join(format!("w{index}")), &self.cfg, &self.generation)
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        for slot in &self.slots {
            if let Some(w) = slot.lock().unwrap_or_else(|e| e.into_inner()).take() {
                w.shutdown();
            }
        }
        remove_scratch(&self.scratch_root);
    }
}

/// Removes a sandbox's scratch folder and then its lock file.
fn remove_scratch(scratch: &Path) {
    let _ = std::fs::remove_dir_all(scratch);
    let _ = std::fs::remove_file(lock_path(scratch));
}

/// The lock file of a scratch folder: its sibling `NAME.lock`.
fn lock_path(scratch: &Path) -> PathBuf {
    let mut p = scratch.as_os_str().to_owned();
    p.push(".lock");
    PathBuf::from(p)
}

/// Creates and locks `scratch`'s lock file before the folder exists. The file is locked under a
/// temporary name and renamed into place, so a sweep never sees it unlocked.
fn lock_scratch(scratch: &Path) -> std::io::Result<std::fs::File> {
    let mut tmp = lock_path(scratch).into_os_string();
    tmp.push(".new");
    let tmp = PathBuf::from(tmp);
    let f = std::fs::File::create(&tmp)?;
    f.try_lock().map_err(|e| std::io::Error::other(format!("{}: cannot lock: {e}", tmp.display())))?;
    std::fs::rename(&tmp, lock_path(scratch))?;
    Ok(f)
}

/// Removes the scratch folders under `root` of sandboxes whose process is gone without cleaning
/// up (killed: no `Drop` ran): those whose lock file no process holds. Quiet about what it cannot
/// remove (another user's folders in a shared /tmp).
fn sweep_dead_scratch(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(dir) = name.strip_prefix("spade-sandbox-").and_then(|n| n.strip_suffix(".lock")) else { continue };
        let Ok(f) = std::fs::File::open(e.path()) else { continue };
        if f.try_lock().is_ok() {
            let dir = root.join(format!("spade-sandbox-{dir}"));
            match std::fs::remove_dir_all(&dir) {
                Ok(()) => tracing::info!("removed {}, the scratch of a sandbox that was killed", dir.display()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(_) => continue,
            }
            let _ = std::fs::remove_file(e.path());
        }
    }
}

fn spawn_worker(path: &Path, scratch: &Path, cfg: &SandboxConfig, gen: &AtomicU64) -> Result<(WorkerProc, Value), Error> {
    let (mine, theirs) = sys::socketpair(libc::SOCK_SEQPACKET)?;
    let fd = theirs.as_raw_fd();
    let mut cmd = Command::new(path);
    cmd.arg("--ctrl-fd")
        .arg("3")
        .arg("--scratch-root")
        .arg(scratch)
        .arg("--netns")
        .arg(if cfg.netns { "auto" } else { "off" })
        .env_clear()
        .env("PYTHONHASHSEED", "0")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONNOUSERSITE", "1")
        .env("PYTHONIOENCODING", "utf-8")
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    if let Ok(p) = std::env::var("PATH") {
        cmd.env("PATH", p);
    }
    if !cfg.python_path.is_empty() {
        let joined = std::env::join_paths(&cfg.python_path).map_err(|e| Error::Worker(format!("python_path: {e}")))?;
        cmd.env("PYTHONPATH", joined);
    }
    if !cfg.preload.is_empty() {
        cmd.env("SPADE_SANDBOX_PRELOAD", cfg.preload.join(","));
    }
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if fd == 3 {
                if libc::fcntl(3, libc::F_SETFD, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            } else if libc::dup2(fd, 3) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd.spawn().map_err(|e| Error::Worker(format!("cannot start {}: {e}", path.display())))?;
    drop(theirs);
    let reply = sys::recv_msg(&mine, Instant::now() + Duration::from_secs(30))
        .map_err(|e| Error::Worker(format!("{} did not start: {e}", path.display())))?;
    let hello: Value = serde_json::from_slice(&reply).map_err(|e| Error::Worker(format!("bad hello from worker: {e}")))?;
    let generation = gen.fetch_add(1, Ordering::SeqCst) + 1;
    Ok((WorkerProc { child, ctrl: mine, generation }, hello))
}

/// Find the worker binary: [`WORKER_ENV`], else next to the current executable or one folder up.
pub fn find_worker() -> Result<PathBuf, Error> {
    if let Some(p) = std::env::var_os(WORKER_ENV) {
        let p = PathBuf::from(p);
        return if p.is_file() { Ok(p) } else { Err(Error::WorkerNotFound) };
    }
    let exe = std::env::current_exe()?;
    let mut dir = exe.parent().map(Path::to_path_buf);
    for _ in 0..2 {
        let Some(d) = dir else { break };
        let cand = d.join(WORKER_BIN);
        if cand.is_file() {
            return Ok(cand);
        }
        dir = d.parent().map(Path::to_path_buf);
    }
    Err(Error::WorkerNotFound)
}

/// A pool of fork-server workers. Cheap to clone; `Send + Sync`.
#[derive(Clone)]
pub struct Sandbox {
    inner: Arc<Inner>,
}

static SANDBOX_SEQ: AtomicUsize = AtomicUsize::new(0);

impl Sandbox {
    /// Start `cfg.jobs` workers and probe the hardening layers (logged at info).
    pub fn new(cfg: SandboxConfig) -> Result<Sandbox, Error> {
        let worker_path = match &cfg.worker {
            Some(p) => p.clone(),
            None => find_worker()?,
        };
        let root = cfg.scratch_root.clone().unwrap_or_else(std::env::temp_dir);
        std::fs::create_dir_all(&root)?;
        sweep_dead_scratch(&root);
        let scratch_root = root.join(format!("spade-sandbox-{}-{}", std::process::id(), SANDBOX_SEQ.fetch_add(1, Ordering::SeqCst)));
        let scratch_lock = lock_scratch(&scratch_root)?;
        std::fs::create_dir_all(&scratch_root)?;
        let jobs = cfg.jobs.max(1);
        let generation = AtomicU64::new(0);
        let mut procs = Vec::with_capacity(jobs);
        let mut layers = Layers::default();
        for i in 0..jobs {
            let (w, hello) = spawn_worker(&worker_path, &scratch_root.join(format!("w{i}")), &cfg, &generation)?;
            if i == 0 {
                let l = &hello["layers"];
                layers = Layers {
                    fork_server: true,
                    rlimits: l["rlimits"].as_bool().unwrap_or(false),
                    seccomp: l["seccomp"].as_bool().unwrap_or(false),
                    landlock_abi: l["landlock_abi"].as_i64().unwrap_or(0),
                    landlock: cfg.landlock && l["landlock_abi"].as_i64().unwrap_or(0) > 0,
                    namespaces: l["netns"].as_str().unwrap_or("?").to_string(),
                    python: hello["python"].as_str().unwrap_or("").to_string(),
                };
                tracing::debug!(ro_paths = %hello["ro_paths"], "sandbox worker hello");
            }
            procs.push(Mutex::new(Some(w)));
        }
        let refused = if !layers.seccomp {
            Some(Error::Unsupported("seccomp".into()))
        } else {
            match layers.missing() {
                Some(missing) if !cfg.allow_weak => Some(Error::Weak(missing)),
                Some(missing) => {
                    tracing::warn!("sandbox: {missing}; running anyway (--allow-weak-sandbox)");
                    None
                }
                None => None,
            }
        };
        if let Some(e) = refused {
            for w in procs.into_iter().filter_map(|p| p.into_inner().unwrap_or_else(|e| e.into_inner())) {
                w.shutdown();
            }
            remove_scratch(&scratch_root);
            return Err(e);
        }
        tracing::info!(jobs, worker = %worker_path.display(), "sandbox layers: {layers}");
        Ok(Sandbox {
            inner: Arc::new(Inner {
                cfg,
                worker_path,
                scratch_root,
                _scratch_lock: scratch_lock,
                slots: procs,
                next: AtomicUsize::new(0),
                generation,
                layers,
            }),
        })
    }

    pub fn layers(&self) -> &Layers {
        &self.inner.layers
    }

    pub fn limits(&self) -> &Limits {
        &self.inner.cfg.limits
    }

    /// PIDs of the worker processes (for tests and diagnostics).
    pub fn worker_pids(&self) -> Vec<u32> {
        self.inner.slots.iter().filter_map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|w| w.child.id())).collect()
    }

    /// Fork a fresh, hardened child with the sandbox's default limits.
    pub fn start(&self) -> CallResult<Episode> {
        self.start_with(self.inner.cfg.limits.clone())
    }

    /// Fork a fresh, hardened child with these limits. Retries once on an infrastructure error.
    pub fn start_with(&self, limits: Limits) -> CallResult<Episode> {
        match self.try_start(&limits) {
            Err(e) if e.status == Status::InfraError => {
                tracing::warn!("sandbox: {e}; retrying once");
                self.try_start(&limits)
            }
            r => r,
        }
    }

    fn try_start(&self, limits: &Limits) -> CallResult<Episode> {
        let infra = |m: String| CallError::new(Status::InfraError, m);
        let n = self.inner.slots.len();
        let slot = self.inner.next.fetch_add(1, Ordering::Relaxed) % n;
        let (lib_end, child_end) = sys::socketpair(libc::SOCK_STREAM).map_err(|e| infra(format!("socketpair: {e}")))?;
        let (out_r, out_w) = sys::pipe().map_err(|e| infra(format!("pipe: {e}")))?;
        let config = json!({
            "memory_bytes": limits.memory_bytes,
            "cpu_seconds": limits.cpu_seconds,
            "file_size_bytes": limits.file_size_bytes,
            "open_files": limits.open_files,
            "nproc": 64,
            "landlock": self.inner.cfg.landlock,
        });
        let req = json!({"op": "spawn", "config": config});
        let mut guard = self.inner.slots[slot].lock().unwrap_or_else(|e| e.into_inner());
        if guard.is_none() {
            let (w, _) = self.inner.spawn_worker(slot).map_err(|e| infra(e.to_string()))?;
            *guard = Some(w);
        }
        let w = guard.as_ref().expect("worker present");
        let generation = w.generation;
        match w.request_fds(&req, &[child_end.as_raw_fd(), out_w.as_raw_fd()], Duration::from_secs(10)) {
            Ok((reply, mut fds)) => {
                drop(guard);
                drop(child_end);
                drop(out_w);
                let Some(pid) = reply["pid"].as_i64() else {
                    return Err(infra(format!("worker refused to spawn: {}", reply["error"])));
                };
                // The child's pid in the worker's PID namespace names it to the worker; a pidfd
                // (sent with the reply) names it here, and gives its pid as this process sees it.
                let pidfd = if reply["pidfd"].as_bool() == Some(true) && !fds.is_empty() { Some(fds.remove(0)) } else { None };
                let host_pid = match &pidfd {
                    Some(fd) => sys::pidfd_pid(fd).unwrap_or(0),
                    None if !self.inner.layers.namespaces.starts_with("pid+") => pid as i32,
                    None => 0,
                };
                let chan = UnixStream::from(lib_end);
                chan.set_nonblocking(true).map_err(|e| infra(e.to_string()))?;
                sys::set_nonblocking(out_r.as_raw_fd()).map_err(|e| infra(e.to_string()))?;
                Ok(Episode {
                    sb: self.inner.clone(),
                    slot,
                    generation,
                    ns_pid: pid as i32,
                    pid: host_pid,
                    pidfd,
                    chan,
                    out: Some(out_r),
                    rbuf: Vec::new(),
                    output: Vec::new(),
                    output_total: 0,
                    dead: None,
                    exit: None,
                    limits: limits.clone(),
                    loaded: false,
                })
            }
            Err(e) => {
                // The worker is broken: replace it on next use.
                if let Some(w) = guard.take() {
                    w.shutdown();
                }
                Err(infra(format!("worker: {e}")))
            }
        }
    }

    /// Start a child, load `code` (its one environment class; `max_turns` is passed to the
    /// constructor when it takes one).
    pub fn open_env(&self, code: &str, max_turns: Option<u32>) -> CallResult<(Episode, LoadInfo)> {
        let mut ep = self.start()?;
        let info = ep.load(code, max_turns)?;
        Ok((ep, info))
    }

    /// One-shot: run `function(*args, **kwargs)` defined by `code` in a fresh child, return
    /// its value reduced to JSON. For untrusted scorers.
    pub fn run_function(&self, code: &str, function: &str, args: &[Value], kwargs: &Value) -> CallResult<Value> {
        let mut ep = self.start()?;
        let timeout = ep.limits.load_timeout + ep.limits.call_timeout;
        let r = ep.call(&json!({"op": "call", "code": code, "function": function, "args": args, "kwargs": kwargs}), timeout, "call");
        ep.close();
        r.map(|mut v| v["value"].take())
    }
}

/// One live environment child. Calls are synchronous, each bounded by a wall-clock deadline.
/// Dropping it kills and reaps the child.
pub struct Episode {
    sb: Arc<Inner>,
    slot: usize,
    generation: u64,
    /// The child's pid in the worker's PID namespace (what the worker reaps).
    ns_pid: i32,
    /// Its pid in this process's namespace (0 once it was gone before we could look).
    pid: i32,
    /// A pidfd of the child, the only way this process signals it.
    pidfd: Option<OwnedFd>,
    chan: UnixStream,
    out: Option<OwnedFd>,
    rbuf: Vec<u8>,
    output: Vec<u8>,
    output_total: usize,
    dead: Option<CallError>,
    exit: Option<ExitInfo>,
    limits: Limits,
    loaded: bool,
}

impl Episode {
    /// The child's pid as this process sees it (the worker runs it in a PID namespace of its own,
    /// where it has another).
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// SIGKILL the child, through its pidfd (a pid of the worker's namespace means nothing here).
    fn kill(&self) {
        match &self.pidfd {
            Some(fd) => sys::pidfd_kill(fd, libc::SIGKILL),
            None if self.pid > 0 && self.pid == self.ns_pid => sys::kill(self.ns_pid, libc::SIGKILL),
            // no pidfd and another namespace: the worker's reap kills it
            None => {}
        }
    }

    /// Captured stdout + stderr so far (at most `output_bytes`).
    pub fn output(&self) -> &[u8] {
        &self.output
    }

    /// The error that ended this child, if it is dead.
    pub fn dead(&self) -> Option<&CallError> {
        self.dead.as_ref()
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Compile and exec `code`, find its environment class and instantiate it.
    pub fn load(&mut self, code: &str, max_turns: Option<u32>) -> CallResult<LoadInfo> {
        let t = self.limits.load_timeout;
        let mut v = self.call(&json!({"op": "load", "code": code, "max_turns": max_turns}), t, "load")?;
        self.loaded = true;
        Ok(LoadInfo {
            class_name: v["class"].as_str().unwrap_or("").to_string(),
            n_classes: v["n_classes"].as_i64().unwrap_or(0),
            reset_takes_seed: v["reset_takes_seed"].as_bool().unwrap_or(false),
            tool_env: v["tool_env"].as_bool().unwrap_or(false),
            timings: v["timings"].take(),
        })
    }

    /// `reset(seed=seed)` → (observation, info).
    pub fn reset(&mut self, seed: u64) -> CallResult<ResetOut> {
        let t = self.limits.call_timeout;
        let mut v = self.call(&json!({"op": "reset", "seed": seed}), t, "reset")?;
        let obs = v["obs"].as_str().map(str::to_string);
        match obs {
            Some(observation) => Ok(ResetOut { observation, info: v["info"].take() }),
            None => Err(CallError::new(Status::InvalidResult, "reset() observation missing").phase("reset")),
        }
    }

    /// `step(action)` → (observation, reward, terminated, truncated, info).
    pub fn step(&mut self, action: &str) -> CallResult<StepOut> {
        let t = self.limits.call_timeout;
        let mut v = self.call(&json!({"op": "step", "action": action}), t, "step")?;
        let bad = |m: &str| CallError::new(Status::InvalidResult, m).phase("step");
        let observation = v["obs"].as_str().ok_or_else(|| bad("step() observation missing"))?.to_string();
        let reward = v["reward"].as_f64().ok_or_else(|| bad("step() reward missing"))?;
        let (lo, hi) = self.limits.reward_range;
        if !(reward >= lo && reward <= hi) {
            return Err(bad(&format!("step() reward {reward} outside [{lo}, {hi}]")));
        }
        Ok(StepOut {
            observation,
            reward,
            terminated: v["terminated"].as_bool().ok_or_else(|| bad("terminated missing"))?,
            truncated: v["truncated"].as_bool().ok_or_else(|| bad("truncated missing"))?,
            info: v["info"].take(),
        })
    }

    /// The environment's plain attributes now (int, float and str values, not bools; at most 32,
    /// each at most 40 characters), as strings: candidate answers for validation's `undetermined`
    /// check, read after a `reset`.
    pub fn state(&mut self) -> CallResult<Vec<String>> {
        let t = self.limits.call_timeout;
        let v = self.call(&json!({"op": "state"}), t, "state")?;
        let values = v["values"].as_array().ok_or_else(|| CallError::new(Status::InvalidResult, "state values missing").phase("state"))?;
        Ok(values.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
    }

    /// Call the environment's `close()` (if any) and end the child; returns how it ended.
    pub fn close(&mut self) -> ExitInfo {
        if self.dead.is_none() && self.exit.is_none() && self.loaded {
            let t = self.limits.call_timeout;
            let _ = self.call(&json!({"op": "close"}), t, "close");
        }
        self.finish(20)
    }

    /// Send one request and wait for its one-line answer, enforcing the deadline and caps.
    fn call(&mut self, req: &Value, timeout: Duration, phase: &str) -> CallResult<Value> {
        if let Some(e) = &self.dead {
            return Err(e.clone());
        }
        let mut wbuf = serde_json::to_vec(req).expect("request serialises");
        wbuf.push(b'\n');
        let mut woff = 0usize;
        let deadline = Instant::now() + timeout;
        let chan_fd = self.chan.as_raw_fd();
        loop {
            if let Some(pos) = self.rbuf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.rbuf.drain(..=pos).collect();
                return self.parse_answer(&line, phase);
            }
            if self.rbuf.len() > self.limits.result_bytes {
                return Err(self.die(Status::OutputTooLarge, format!("answer larger than {} bytes", self.limits.result_bytes), phase));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(self.die(Status::Timeout, format!("no answer within {:.3}s", timeout.as_secs_f64()), phase));
            }
            let ms = (deadline - now).as_millis().clamp(1, i32::MAX as u128) as i32;
            let mut pfds = [
                libc::pollfd { fd: chan_fd, events: libc::POLLIN | if woff < wbuf.len() { libc::POLLOUT } else { 0 }, revents: 0 },
                libc::pollfd { fd: self.out.as_ref().map_or(-1, |f| f.as_raw_fd()), events: libc::POLLIN, revents: 0 },
            ];
            // SAFETY: two valid pollfds (a negative fd is ignored by poll).
            let r = unsafe { libc::poll(pfds.as_mut_ptr(), 2, ms) };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(self.die(Status::InfraError, format!("poll: {e}"), phase));
            }
            if pfds[1].revents != 0 {
                if let Some(err) = self.drain_output(phase) {
                    return Err(err);
                }
            }
            if pfds[0].revents & libc::POLLOUT != 0 && woff < wbuf.len() {
                use std::io::Write;
                match (&self.chan).write(&wbuf[woff..]) {
                    Ok(n) => woff += n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(_) => return Err(self.child_gone(phase)),
                }
            }
            if pfds[0].revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                use std::io::Read;
                let mut buf = [0u8; 65536];
                match (&self.chan).read(&mut buf) {
                    Ok(0) => {
                        // drain what it printed before dying, for the message
                        let _ = self.drain_output(phase);
                        return Err(self.child_gone(phase));
                    }
                    Ok(n) => self.rbuf.extend_from_slice(&buf[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                    Err(_) => return Err(self.child_gone(phase)),
                }
            }
        }
    }

    /// Read stdout/stderr; returns an error when the cap is exceeded.
    fn drain_output(&mut self, phase: &str) -> Option<CallError> {
        use std::io::Read;
        let Some(fd) = &self.out else { return None };
        let mut file = std::fs::File::from(fd.try_clone().ok()?);
        let mut buf = [0u8; 65536];
        loop {
            match file.read(&mut buf) {
                Ok(0) => {
                    self.out = None;
                    return None;
                }
                Ok(n) => {
                    self.output_total += n;
                    let room = self.limits.output_bytes.saturating_sub(self.output.len());
                    self.output.extend_from_slice(&buf[..n.min(room)]);
                    if self.output_total > self.limits.output_bytes {
                        return Some(self.die(Status::OutputTooLarge, format!("stdout/stderr exceeded {} bytes", self.limits.output_bytes), phase));
                    }
                }
                Err(_) => return None,
            }
        }
    }

    fn parse_answer(&mut self, line: &[u8], phase: &str) -> CallResult<Value> {
        let v: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => return Err(CallError::new(Status::InvalidResult, format!("unreadable answer on the result channel: {e}")).phase(phase)),
        };
        let status = v["status"].as_str().unwrap_or("");
        let st = match status {
            "ok" => return Ok(v),
            "exception" => Status::Exception,
            "memory" => Status::Memory,
            "invalid_result" => Status::InvalidResult,
            _ => Status::InvalidResult,
        };
        Err(CallError {
            status: st,
            message: v["error"].as_str().unwrap_or("(no message)").to_string(),
            traceback: v["traceback"].as_str().map(str::to_string),
            phase: Some(v["phase"].as_str().unwrap_or(phase).to_string()),
        })
    }

    /// The channel closed or broke: the child died (or closed it). Classify by exit status.
    fn child_gone(&mut self, phase: &str) -> CallError {
        let exit = self.finish(200);
        let tail = self.output_tail();
        let (status, msg) = match (exit.signal, exit.code) {
            (Some(s), _) if s == libc::SIGXCPU => (Status::Timeout, "CPU time limit exceeded (SIGXCPU)".to_string()),
            (Some(s), _) if s == libc::SIGKILL && !exit.killed => (Status::Memory, "killed by SIGKILL (out of memory or CPU hard limit)".to_string()),
            (Some(s), _) if s == libc::SIGXFSZ => (Status::OutputTooLarge, "file size limit exceeded (SIGXFSZ)".to_string()),
            (Some(s), _) => (Status::Crashed, format!("killed by signal {s} ({})", signal_name(s))),
            (None, Some(70)) => (Status::InfraError, format!("sandbox setup failed: {tail}")),
            (None, Some(72)) => (Status::Crashed, "the episode server failed (environment broke its channel)".to_string()),
            (None, Some(c)) => (Status::Crashed, format!("process exited with code {c}")),
            (None, None) => (Status::InfraError, "child vanished".to_string()),
        };
        let msg = if tail.is_empty() || status == Status::InfraError { msg } else { format!("{msg}; output: {tail}") };
        let e = CallError::new(status, msg).phase(phase);
        self.dead = Some(e.clone());
        e
    }

    fn output_tail(&self) -> String {
        let s = String::from_utf8_lossy(&self.output);
        let s = s.trim_end();
        let start = s.len().saturating_sub(300);
        let start = (start..s.len()).find(|&i| s.is_char_boundary(i)).unwrap_or(s.len());
        s[start..].replace('\n', " | ")
    }

    /// Kill the child for `status` and remember the error.
    fn die(&mut self, status: Status, msg: String, phase: &str) -> CallError {
        self.kill();
        self.finish(0);
        let e = CallError::new(status, msg).phase(phase);
        self.dead = Some(e.clone());
        e
    }

    /// Reap the child through its worker (kill it after `grace_ms`).
    fn finish(&mut self, grace_ms: u64) -> ExitInfo {
        if let Some(x) = &self.exit {
            return x.clone();
        }
        let mut guard = self.sb.slots[self.slot].lock().unwrap_or_else(|e| e.into_inner());
        let info = match guard.as_ref() {
            Some(w) if w.generation == self.generation => {
                match w.request(
                    &json!({"op": "reap", "pid": self.ns_pid, "grace_ms": grace_ms}),
                    &[],
                    Duration::from_secs(10) + Duration::from_millis(grace_ms),
                ) {
                    Ok(v) => ExitInfo {
                        code: v["code"].as_i64().map(|c| c as i32),
                        signal: v["signal"].as_i64().map(|c| c as i32),
                        killed: v["killed"].as_bool().unwrap_or(false),
                    },
                    Err(e) => {
                        tracing::warn!("sandbox: reap failed: {e}; restarting worker");
                        self.kill();
                        if let Some(w) = guard.take() {
                            w.shutdown();
                        }
                        ExitInfo::default()
                    }
                }
            }
            // The worker was replaced: its children died with it (parent-death signal).
            _ => ExitInfo { code: None, signal: Some(libc::SIGKILL), killed: true },
        };
        drop(guard);
        self.exit = Some(info.clone());
        if self.dead.is_none() {
            self.dead = Some(CallError::new(Status::InfraError, "episode closed"));
        }
        info
    }
}

impl Drop for Episode {
    fn drop(&mut self) {
        if self.exit.is_none() {
            self.kill();
            self.finish(0);
        }
    }
}

fn signal_name(s: i32) -> &'static str {
    match s {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGSYS => "SIGSYS",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        _ => "signal",
    }
}
