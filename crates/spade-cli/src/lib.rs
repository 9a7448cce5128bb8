//! Shared command-line conventions of every spade stage.
//!
//! - [`Common`]: the flags every stage takes (`--seed`, `-q/-v`, `--progress`, `--config`,
//!   `--metrics`, `--round`), flattened into each stage's clap struct.
//! - [`parse`]: clap parsing with `--config FILE` (TOML whose keys mirror the long flags; flags on
//!   the command line win).
//! - [`run`]: the tiny `main` of every stage: logging set up, errors printed once as one line on
//!   stderr with exit status 2, a broken pipe exits 0.
//! - [`Common::progress`]: indicatif progress bars on stderr, hidden under `-q` and `--progress off`,
//!   and a log line a minute instead when stderr is not a terminal (`auto`).
//! - [`append_metrics`]: one JSON line appended per call to `--metrics FILE`.

#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use clap::{ArgAction, Args, Parser, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

/// Environment variables spade reads, named in one place.
pub mod env {
    /// Default `--seed`.
    pub const SEED: &str = "SPADE_SEED";
    /// Read by `spade_sandbox::SandboxConfig::default()` (its `ALLOW_WEAK_ENV`).
    pub const ALLOW_WEAK_SANDBOX: &str = "SPADE_ALLOW_WEAK_SANDBOX";
    /// Default `--progress`.
    pub const PROGRESS: &str = "SPADE_PROGRESS";
    /// Default `--metrics`.
    pub const METRICS: &str = "SPADE_METRICS";
    /// Log filter (tracing `EnvFilter` syntax), overriding `-q/-v`.
    pub const LOG: &str = "RUST_LOG";
    /// A shell command run after each metrics line is appended (live loggers: `make round
    /// LOGGERS=tensorboard,wandb` sets it to `scripts/loggers.py`); it gets the file in
    /// `SPADE_METRICS_FILE`, its output goes to stderr.
    pub const METRICS_HOOK: &str = "SPADE_METRICS_HOOK";
    /// The metrics file, for the hook.
    pub const METRICS_FILE: &str = "SPADE_METRICS_FILE";
}

/// When to draw progress bars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Progress {
    /// A bar when stderr is a terminal; otherwise (a log file) the bar's state as a log line at
    /// most once a minute.
    Auto,
    /// Always (also into a log file).
    On,
    /// Never.
    Off,
}

/// Flags shared by all stages.
#[derive(Debug, Clone, Args, Serialize)]
pub struct Common {
    /// Seed of everything the stage samples; same inputs and seed give the same output.
    #[arg(long, env = env::SEED, default_value_t = 0, help_heading = "Common")]
    pub seed: u64,

    /// Self-play round, stamped into ids and round-dependent columns.
    #[arg(long, default_value_t = 0, help_heading = "Common")]
    pub round: u64,

    /// TOML file whose keys mirror the long flags (`max-words = 300`); command-line flags win.
    #[arg(long, value_name = "FILE", help_heading = "Common")]
    pub config: Option<PathBuf>,

    /// Append one JSON line of metrics for this call to FILE.
    #[arg(long, value_name = "FILE", env = env::METRICS, help_heading = "Common")]
    pub metrics: Option<PathBuf>,

    /// Progress bars on stderr.
    #[arg(long, value_enum, env = env::PROGRESS, default_value_t = Progress::Auto, help_heading = "Common")]
    pub progress: Progress,

    /// Less logging (-q warnings only, -qq errors only; also hides progress).
    #[arg(short, long, action = ArgAction::Count, help_heading = "Common")]
    pub quiet: u8,

    /// More logging (-v debug, -vv trace).
    #[arg(short, long, action = ArgAction::Count, help_heading = "Common")]
    pub verbose: u8,

    /// Run model-written code even where the sandbox lacks a layer (landlock; network, IPC and UTS
    /// namespaces), which stages that run environments otherwise refuse.
    #[arg(long, env = env::ALLOW_WEAK_SANDBOX, help_heading = "Common")]
    pub allow_weak_sandbox: bool,

    /// Print the man page (man) or a shell completion script (complete-bash, complete-zsh,
    /// complete-fish, complete-powershell, complete-elvish) to stdout and exit; must come first.
    #[arg(long, value_name = "KIND", help_heading = "Common")]
    #[serde(skip)]
    pub generate: Option<String>,
}

/// What `--generate` accepts.
pub const GENERATE_KINDS: &[&str] = &["man", "complete-bash", "complete-zsh", "complete-fish", "complete-powershell", "complete-elvish"];

/// `STAGE --generate KIND`: the man page or a completion script of the stage's own command line,
/// written to `out`. An unknown kind is an error naming the kinds.
pub fn generate(mut cmd: clap::Command, kind: &str, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
    use clap_complete::Shell;
    let name = cmd.get_name().to_string();
    let shell = match kind {
        "man" => return Ok(clap_mangen::Man::new(cmd).render(out)?),
        "complete-bash" => Shell::Bash,
        "complete-zsh" => Shell::Zsh,
        "complete-fish" => Shell::Fish,
        "complete-powershell" => Shell::PowerShell,
        "complete-elvish" => Shell::Elvish,
        other => anyhow::bail!("--generate `{other}`: expected one of {}", GENERATE_KINDS.join(", ")),
    };
    clap_complete::generate(shell, &mut cmd, name, out);
    Ok(())
}

/// How often a progress bar drawn into a log file writes its line.
pub const LOG_LINE_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

// A log line's rate and eta are the averages since the start (`avg_rate`, `avg_eta`): indicatif's own
// follow the last few updates, which swing by 30x when items finish in batches.
const LOG_LINE_TEMPLATE: &str = "{msg}: {human_pos}/{human_len} after {elapsed} ({avg_rate}, eta {avg_eta})";
const LOG_LINE_TEMPLATE_SPINNER: &str = "{msg}: {human_pos} after {elapsed} ({avg_rate})";

/// The log lines' style: `template` with the average rate and eta since the start.
fn log_line_style(template: &str) -> ProgressStyle {
    let rate = |s: &indicatif::ProgressState| s.pos() as f64 / s.elapsed().as_secs_f64().max(1e-9);
    ProgressStyle::with_template(template)
        .expect("valid template")
        .with_key("avg_rate", move |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{:.3}/s", rate(s));
        })
        .with_key("avg_eta", move |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
            let left = s.len().map(|n| n.saturating_sub(s.pos()) as f64);
            let _ = match left {
                Some(left) if s.pos() > 0 => write!(w, "{:#}", indicatif::HumanDuration(std::time::Duration::from_secs_f64(left / rate(s)))),
                _ => write!(w, "?"),
            };
        })
}

/// A progress bar's terminal in a log file: each draw's text, at most one line per `every` (the
/// first after `every`, so a short stage writes none), as an info log line (with its time, and
/// silenced with the other logs by `-q`). Cursor moves and clears are dropped.
#[derive(Debug)]
struct LogLines {
    every: std::time::Duration,
    state: std::sync::Mutex<(std::time::Instant, String)>,
    sink: fn(&str),
}

impl LogLines {
    fn new(every: std::time::Duration) -> LogLines {
        LogLines::with_sink(every, |line| tracing::info!("{line}"))
    }

    fn with_sink(every: std::time::Duration, sink: fn(&str)) -> LogLines {
        LogLines { every, state: std::sync::Mutex::new((std::time::Instant::now(), String::new())), sink }
    }
}

impl indicatif::TermLike for LogLines {
    fn width(&self) -> u16 {
        200
    }
    fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
        Ok(())
    }
    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.write_str(s)
    }
    fn write_str(&self, s: &str) -> std::io::Result<()> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.1.push_str(s);
        Ok(())
    }
    fn clear_line(&self) -> std::io::Result<()> {
        Ok(())
    }
    fn flush(&self) -> std::io::Result<()> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let text = std::mem::take(&mut st.1);
        let text = text.trim();
        if !text.is_empty() && st.0.elapsed() >= self.every {
            (self.sink)(text);
            st.0 = std::time::Instant::now();
        }
        Ok(())
    }
}

/// How [`Common::progress`] shows a bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Draw {
    /// Not at all (`-q`, `--progress off`).
    Hidden,
    /// As log lines (`auto` with stderr not a terminal).
    LogLines,
    /// As a bar (a terminal, or `--progress on`).
    Bar,
}

impl Common {
    fn draw(&self) -> Draw {
        if self.quiet > 0 || self.progress == Progress::Off {
            Draw::Hidden
        } else if self.progress == Progress::Auto && !std::io::stderr().is_terminal() {
            Draw::LogLines
        } else {
            Draw::Bar
        }
    }

    /// Whether [`Common::progress`] draws a bar (not hidden, not log lines): a stage that logs its
    /// own line per step does so when this is false.
    pub fn draws_bar(&self) -> bool {
        self.draw() == Draw::Bar
    }

    /// A progress bar on stderr for `len` items (`None`: a spinner), or a hidden one.
    pub fn progress(&self, len: Option<u64>, message: &str) -> ProgressBar {
        let pb = match self.draw() {
            Draw::Hidden => return ProgressBar::hidden(),
            Draw::LogLines => {
                let template = if len.is_some() { LOG_LINE_TEMPLATE } else { LOG_LINE_TEMPLATE_SPINNER };
                let pb = ProgressBar::with_draw_target(len, ProgressDrawTarget::term_like_with_hz(Box::new(LogLines::new(LOG_LINE_EVERY)), 1))
                    .with_style(log_line_style(template));
                // Redrawn on a clock too, so a stage whose items all finish late still says it is alive.
                pb.enable_steady_tick(std::time::Duration::from_secs(5));
                pb
            }
            Draw::Bar => {
                let pb = match len {
                    Some(n) => ProgressBar::with_draw_target(Some(n), ProgressDrawTarget::stderr_with_hz(4)).with_style(
                        ProgressStyle::with_template("{msg:>12} [{elapsed_precise}] {wide_bar} {pos}/{len} ({per_sec}, eta {eta})")
                            .expect("valid template"),
                    ),
                    None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4)).with_style(
                        ProgressStyle::with_template("{msg:>12} [{elapsed_precise}] {spinner} {human_pos} ({per_sec})").expect("valid template"),
                    ),
                };
                if !std::io::stderr().is_terminal() {
                    // --progress on into a log file: the bar as a terminal would draw it.
                    pb.set_draw_target(ProgressDrawTarget::term_like_with_hz(Box::new(console::Term::stderr()), 1));
                }
                pb
            }
        };
        pb.set_message(message.to_string());
        pb
    }

    /// Appends one metrics line (if `--metrics` was given), adding the stage name, round and seed.
    pub fn metrics(&self, stage: &str, mut value: serde_json::Value) -> anyhow::Result<()> {
        let Some(path) = &self.metrics else { return Ok(()) };
        if let Some(o) = value.as_object_mut() {
            o.insert("stage".into(), stage.into());
            o.insert("round".into(), self.round.into());
            o.insert("seed".into(), self.seed.into());
        }
        append_metrics(path, &value)?;
        run_metrics_hook(path);
        Ok(())
    }
}

/// Runs `SPADE_METRICS_HOOK` (when set) after a metrics line was appended to `path`. The stage's
/// outputs are already written, so a failing hook is a warning, never a failed stage; its stdout
/// goes to stderr, away from a stage's data on stdout.
pub fn run_metrics_hook(path: &Path) {
    let Ok(cmd) = std::env::var(env::METRICS_HOOK) else { return };
    if cmd.trim().is_empty() {
        return;
    }
    let stdout = match std::io::stderr().as_fd().try_clone_to_owned() {
        Ok(fd) => std::process::Stdio::from(fd),
        Err(_) => std::process::Stdio::null(),
    };
    let status =
        std::process::Command::new("sh").arg("-c").arg(&cmd).env(env::METRICS_FILE, path).stdin(std::process::Stdio::null()).stdout(stdout).status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => tracing::warn!("metrics hook `{cmd}` failed ({s}); the stage's outputs are written, the live logs lag"),
        Err(e) => tracing::warn!("metrics hook `{cmd}` did not start ({e}); the stage's outputs are written, the live logs lag"),
    }
}

/// Appends `value` as one JSON line to `path` (one `write` call, so concurrent appenders on a local
/// filesystem don't interleave).
pub fn append_metrics(path: &Path, value: &serde_json::Value) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create folder", dir.display()))?;
    }
    let mut line = serde_json::to_vec(value)?;
    line.push(b'\n');
    let mut f =
        std::fs::OpenOptions::new().create(true).append(true).open(path).with_context(|| format!("{}: cannot open metrics file", path.display()))?;
    f.write_all(&line).with_context(|| format!("{}: cannot append metrics", path.display()))?;
    Ok(())
}

/// Parses the command line of a stage, with defaults from `--config FILE`.
///
/// Keys of the TOML file are long flag names (`-` or `_`); values are strings, numbers, booleans
/// (a `true` switch is passed as the bare flag) or arrays (the flag repeated). A flag given on the
/// command line wins over the file. Usage errors exit 2 with clap's message; `--help` exits 0.
pub fn parse<T: Parser>() -> T {
    let raw: Vec<OsString> = std::env::args_os().collect();
    if raw.get(1).is_some_and(|a| a == "--generate" || a.to_string_lossy().starts_with("--generate=")) {
        let first = raw[1].to_string_lossy().to_string();
        let kind = match first.strip_prefix("--generate=") {
            Some(k) => k.to_string(),
            None => raw.get(2).map(|k| k.to_string_lossy().to_string()).unwrap_or_default(),
        };
        // Into a buffer first: the generators panic on a write error, and a closed stdout is not one.
        let mut buf = Vec::new();
        let written = generate(T::command(), &kind, &mut buf).and_then(|()| {
            let mut out = std::io::stdout().lock();
            out.write_all(&buf)?;
            Ok(out.flush()?)
        });
        match written {
            Ok(()) => std::process::exit(0),
            Err(e) if is_broken_pipe(&e) => std::process::exit(0),
            Err(e) => {
                eprintln!("error: {e:#}");
                std::process::exit(2)
            }
        }
    }
    match parse_from::<T>(raw) {
        Ok(t) => t,
        Err(ParseError::Clap(e)) => e.exit(),
        Err(ParseError::Config(e)) => {
            eprintln!("error: {e:#}");
            std::process::exit(2)
        }
    }
}

#[derive(Debug)]
pub enum ParseError {
    Clap(clap::Error),
    Config(anyhow::Error),
}

/// [`parse`] on explicit arguments (the program name first).
pub fn parse_from<T: Parser>(raw: Vec<OsString>) -> Result<T, ParseError> {
    let cmd = T::command();
    let config = config_path(&raw);
    let mut args = raw.clone();
    if let Some(path) = config {
        let extra = config_args(&cmd, &path, &raw).map_err(ParseError::Config)?;
        args.splice(1..1, extra);
    }
    let matches = cmd.try_get_matches_from(args).map_err(ParseError::Clap)?;
    T::from_arg_matches(&matches).map_err(ParseError::Clap)
}

fn config_path(raw: &[OsString]) -> Option<PathBuf> {
    let mut it = raw.iter().skip(1);
    while let Some(a) = it.next() {
        let s = a.to_string_lossy();
        if s == "--" {
            break;
        }
        if s == "--config" {
            return it.next().map(PathBuf::from);
        }
        if let Some(v) = s.strip_prefix("--config=") {
            return Some(PathBuf::from(v));
        }
    }
    None
}

fn config_args(cmd: &clap::Command, path: &Path, raw: &[OsString]) -> anyhow::Result<Vec<OsString>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}: cannot read config", path.display()))?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: invalid TOML: {}", path.display(), e.message()))?;
    let given = |arg: &clap::Arg| {
        raw.iter().skip(1).any(|a| {
            let s = a.to_string_lossy();
            let long = arg.get_long().map(|l| s == format!("--{l}") || s.starts_with(&format!("--{l}="))).unwrap_or(false);
            let short = arg.get_short().map(|c| s.starts_with('-') && !s.starts_with("--") && s[1..].starts_with(c)).unwrap_or(false);
            long || short
        })
    };
    let mut out = Vec::new();
    for (key, value) in &table {
        let name = key.replace('_', "-");
        if name == "config" {
            bail!("{}: key `config` cannot appear in a config file", path.display());
        }
        let Some(arg) = cmd.get_arguments().find(|a| a.get_long() == Some(name.as_str())) else {
            bail!("{}: unknown key `{key}` (no flag --{name})", path.display());
        };
        if given(arg) {
            continue;
        }
        let flag = format!("--{name}");
        let scalar = |v: &toml::Value| -> anyhow::Result<String> {
            Ok(match v {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Float(f) => f.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                other => bail!("{}: key `{key}`: unsupported value {other}", path.display()),
            })
        };
        match (arg.get_action(), value) {
            (ArgAction::SetTrue, toml::Value::Boolean(b)) => {
                if *b {
                    out.push(flag.into());
                }
            }
            (ArgAction::Count, toml::Value::Integer(n)) => {
                for _ in 0..*n {
                    out.push(flag.clone().into());
                }
            }
            (_, toml::Value::Array(items)) => {
                for v in items {
                    out.push(flag.clone().into());
                    out.push(scalar(v)?.into());
                }
            }
            (_, v) => {
                out.push(flag.into());
                out.push(scalar(v)?.into());
            }
        }
    }
    Ok(out)
}

/// Sets up logging on stderr: info by default, `-q`/`-v` adjust, `RUST_LOG` overrides.
pub fn init_logging(common: &Common) {
    use tracing_subscriber::EnvFilter;
    let level = match (common.quiet, common.verbose) {
        (0, 0) => "info",
        (0, 1) => "debug",
        (0, _) => "trace",
        (1, _) => "warn",
        _ => "error",
    };
    let filter = EnvFilter::try_from_env(env::LOG).unwrap_or_else(|_| EnvFilter::new(level));
    // A terminal gets colour and no clock; a log file plain lines with the time (when did update 5 end?).
    let tty = std::io::stderr().is_terminal();
    let fmt = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(tty && std::env::var_os("NO_COLOR").is_none());
    let _ = if tty { fmt.without_time().try_init() } else { fmt.try_init() };
}

/// Runs a stage body and maps its outcome to an exit status: 0 on success, 2 with the error chain
/// printed once as one line on stderr, 0 when stdout was closed early (broken pipe).
/// A stage's whole `main`: parse its arguments ([`parse`]), then [`run`] its body with them.
/// `common` picks the stage's [`Common`] flags out of its arguments.
///
/// ```ignore
/// fn main() -> ExitCode {
///     spade_cli::main(|a: &Args| &a.common, run)
/// }
/// ```
pub fn main<T: Parser>(common: impl Fn(&T) -> &Common, body: impl FnOnce(T) -> anyhow::Result<()>) -> ExitCode {
    let args: T = parse();
    let c = common(&args).clone();
    run(&c, || body(args))
}

pub fn run(common: &Common, body: impl FnOnce() -> anyhow::Result<()>) -> ExitCode {
    init_logging(common);
    if common.allow_weak_sandbox {
        // read where the stage starts its sandbox (before any thread is started here)
        std::env::set_var(env::ALLOW_WEAK_SANDBOX, "1");
    }
    if common.generate.is_some() {
        eprintln!("error: --generate must be the first argument (`STAGE --generate KIND`)");
        return ExitCode::from(2);
    }
    match body() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            let line = format!("{e:#}").replace('\n', " ");
            eprintln!("error: {line}");
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().map(|io| io.kind() == std::io::ErrorKind::BrokenPipe).unwrap_or(false)
            || c.to_string().contains("Broken pipe")
    })
}

/// The full configuration of a call, as JSON, for metadata and metrics.
pub fn config_json(args: &impl Serialize) -> serde_json::Value {
    serde_json::to_value(args).unwrap_or(serde_json::Value::Null)
}

/// Parses `LO,HI` (finite numbers, LO ≤ HI), for clap's `value_parser` (`--reward-range`, the regret bands).
pub fn parse_range(s: &str) -> Result<(f64, f64), String> {
    let (a, b) = s.split_once(',').ok_or_else(|| format!("`{s}`: expected LO,HI, e.g. 0.4,0.6"))?;
    let lo: f64 = a.trim().parse().map_err(|_| format!("`{s}`: LO is not a number"))?;
    let hi: f64 = b.trim().parse().map_err(|_| format!("`{s}`: HI is not a number"))?;
    if !(lo.is_finite() && hi.is_finite()) {
        return Err(format!("`{s}`: LO and HI must be finite"));
    }
    if lo > hi {
        return Err(format!("`{s}`: LO > HI"));
    }
    Ok((lo, hi))
}

/// Parses `I/N` shard specs (I from 0 to N−1, as Slurm array indices).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl std::str::FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (i, n) = s.split_once('/').ok_or_else(|| format!("`{s}`: expected I/N, e.g. 0/4"))?;
        let index: u32 = i.trim().parse().map_err(|_| format!("`{s}`: shard index is not a number"))?;
        let count: u32 = n.trim().parse().map_err(|_| format!("`{s}`: shard count is not a number"))?;
        if count == 0 || index >= count {
            return Err(format!("`{s}`: need 0 <= I < N"));
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// Whether item `key` (a stable hash) belongs to this shard.
    pub fn owns(&self, key: u64) -> bool {
        key % self.count as u64 == self.index as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    static LINES: Mutex<Vec<String>> = Mutex::new(Vec::new());

    fn bar(every: std::time::Duration, len: u64) -> ProgressBar {
        let target = ProgressDrawTarget::term_like_with_hz(Box::new(LogLines::with_sink(every, |l| LINES.lock().unwrap().push(l.to_string()))), 1);
        let pb = ProgressBar::with_draw_target(Some(len), target).with_style(log_line_style(LOG_LINE_TEMPLATE));
        pb.set_message("design");
        pb
    }

    #[test]
    fn a_bar_in_a_log_file_is_a_plain_line_at_most_every_interval() {
        let pb = bar(std::time::Duration::ZERO, 32);
        pb.inc(12);
        pb.tick();
        let lines = std::mem::take(&mut *LINES.lock().unwrap());
        assert!(!lines.is_empty(), "no line written");
        let last = lines.last().unwrap();
        assert!(last.starts_with("design: 12/32 after ") && last.contains("/s, eta ") && !last.contains('\r'), "{lines:?}");
        // Within the interval (the first one included) nothing is written.
        let pb = bar(std::time::Duration::from_secs(3600), 32);
        pb.inc(5);
        pb.tick();
        pb.finish();
        assert!(LINES.lock().unwrap().is_empty());
    }
}
