//! `spade-validate`: check candidate environments in the sandbox; write the ones that pass
//! (`envs`) and the rejects (`rejects`, with the stage reached, the status, the error and a
//! graded validity).
//!
//! Input: a candidates table (Parquet/JSONL; only `code` — or `final_code` when present and
//! non-null — is required; every other column is carried through), or a folder of `.py`
//! environments whose first lines are comments `# skill: …`, `# setting: games|tool-use`,
//! `# hint: …`. Every input row lands in exactly one of the two outputs; all rejected is a
//! normal outcome. The checks and the validity scale are documented in
//! `spade_sandbox::validate`. `env_id` is the first 16 hex digits of the SHA-256 of the code
//! that was run.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use arrow::array::RecordBatch;
use clap::Parser;
use serde::{Deserialize, Serialize};
use spade_cli::Common;
use spade_io::{TableReader, TableWriter, WriteMeta};
use spade_sandbox::validate::{self, Candidate, CheckConfig, Setting, Stage, Verdict};
use spade_sandbox::{Limits, Sandbox, SandboxConfig};
use spade_schema::{EnvRow, RejectRow};

const EXAMPLES: &str = "\
Examples:
  spade-validate candidates.parquet -o envs.parquet --rejects rejects.parquet --jobs 2
  spade-validate data/seed-envs -o seed-envs.parquet --rejects seed-rejects.jsonl
  spade-validate pool.jsonl -o envs.jsonl --rejects rejects.jsonl --reward-range 0,1 --max-turns 12";

/// Check candidate environments in the sandbox; write the ones that pass and the rejects.
#[derive(Debug, Parser, Serialize)]
#[command(name = "spade-validate", version, about, long_about = None, after_help = EXAMPLES)]
struct Args {
    /// A candidates table (Parquet/JSONL, several shards or a glob) or a folder of .py environments.
    #[arg(required = true, value_name = "CANDIDATES|FOLDER")]
    input: Vec<String>,

    /// Output `envs` table (passed).
    #[arg(short, long, value_name = "FILE")]
    output: String,

    /// Output `rejects` table (failed, with stage and error).
    #[arg(long, value_name = "FILE")]
    rejects: String,

    /// Environments already known (memory tables, envs tables or folders of .py files, e.g. the
    /// run's memory or a warm-up's training pool): a candidate that copies one, exactly or nearly,
    /// is rejected as a duplicate.
    #[arg(long, value_name = "FILE|FOLDER", num_args = 1..)]
    known: Vec<String>,

    /// Environments checked in parallel (sandbox worker processes).
    #[arg(long, default_value_t = 1)]
    jobs: usize,

    /// Allowed reward range per step, LO,HI.
    #[arg(long, default_value = "-10,10", value_name = "LO,HI", value_parser = parse_reward_range)]
    reward_range: (f64, f64),

    /// Turn limit every probe episode must end within (passed to the constructor as max_turns).
    #[arg(long, default_value_t = 8)]
    max_turns: u32,

    /// Wall-clock limit of one reset or step call, seconds.
    #[arg(long, default_value_t = 5.0, value_name = "SECS")]
    call_timeout: f64,

    /// Wall-clock limit for loading an environment (compile, exec, instantiate), seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECS")]
    load_timeout: f64,

    /// Address-space limit of each environment process, MiB.
    #[arg(long, default_value_t = 1024, value_name = "MIB")]
    memory_mb: u64,

    /// Reject an environment unless its reference solver (`solve(observations)`, in a `solver`
    /// column or after a `# --- solver ---` line of the code; it sees only the observations, in a
    /// process of its own) wins every solver episode: environments whose answer is not determined
    /// by what the agent is shown are rejected before any agent plays them. Without it, solvers
    /// present are still played and recorded.
    #[arg(long)]
    require_solver: bool,

    /// Solver episodes (seeds 0..N).
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    solver_seeds: u64,

    #[command(flatten)]
    common: Common,
}

/// `--reward-range`: [`spade_cli::parse_range`], with an empty range (LO = HI) refused.
fn parse_reward_range(s: &str) -> Result<(f64, f64), String> {
    let (lo, hi) = spade_cli::parse_range(s)?;
    if lo == hi {
        return Err(format!("`{s}`: need LO < HI"));
    }
    Ok((lo, hi))
}

fn main() -> ExitCode {
    spade_cli::main(|a: &Args| &a.common, run)
}

/// One input row, with what validate reads from it.
struct Row {
    code: Option<String>,
    /// The reference solver (a `solver` column, or the code's part after `# --- solver ---`).
    solver: Option<String>,
    hint: Option<String>,
    skill: Option<String>,
    setting: Option<String>,
    candidate_id: Option<String>,
    source: Option<String>,
}

struct Input {
    rows: Vec<Row>,
    /// The input table (all rows, unified schema) to carry columns from; None for a folder.
    carried: Option<RecordBatch>,
}

fn is_py(p: &Path) -> bool {
    p.is_file() && p.extension().is_some_and(|e| e == "py")
}

/// `.py` files named by the inputs, when they all are folders of `.py` files or `.py` files.
fn py_files(inputs: &[String]) -> anyhow::Result<Option<Vec<PathBuf>>> {
    let mut files = Vec::new();
    for i in inputs {
        let p = Path::new(i);
        if p.is_dir() {
            let found = spade_design::memory::py_files(p).with_context(|| format!("{i}: cannot read folder"))?;
            if found.is_empty() {
                return Ok(None);
            }
            files.extend(found);
        } else if is_py(p) {
            files.push(p.to_path_buf());
        } else {
            return Ok(None);
        }
    }
    Ok(Some(files))
}

fn read_folder(files: &[PathBuf]) -> anyhow::Result<Input> {
    let mut rows = Vec::new();
    for f in files {
        let bytes = std::fs::read(f).with_context(|| format!("{}: cannot read", f.display()))?;
        let code = String::from_utf8(bytes).map_err(|_| anyhow::anyhow!("{}: not UTF-8 text", f.display()))?;
        let (code, solver) = validate::split_solver(&code);
        rows.push(Row {
            hint: spade_design::memory::header(&code, "hint"),
            skill: spade_design::memory::header(&code, "skill"),
            setting: spade_design::memory::header(&code, "setting"),
            candidate_id: None,
            source: f.file_name().map(|n| n.to_string_lossy().to_string()),
            code: Some(code),
            solver,
        });
    }
    Ok(Input { rows, carried: None })
}

/// The columns of an input row validate reads (a candidates, envs or memory table).
#[derive(Deserialize)]
struct InRow {
    code: Option<String>,
    final_code: Option<String>,
    solver: Option<String>,
    hint: Option<String>,
    skill: Option<String>,
    setting: Option<String>,
    candidate_id: Option<String>,
    source: Option<String>,
}

fn read_table(inputs: &[String]) -> anyhow::Result<Input> {
    let reader = TableReader::open(inputs)?;
    let schema = reader.schema();
    let origin = inputs.join(", ");
    if reader.num_rows() > 0 && schema.field_with_name("code").is_err() && schema.field_with_name("final_code").is_err() {
        bail!("{origin}: column `code` (or `final_code`): missing");
    }
    let batches = reader.read_all()?;
    let mut rows = Vec::new();
    for b in &batches {
        for r in b.rows::<InRow>(&spade_schema::CANDIDATES)? {
            let (code, in_code) = validate::split_solver_opt(r.final_code.as_deref().or(r.code.as_deref()));
            rows.push(Row {
                code,
                solver: r.solver.filter(|x| !x.trim().is_empty()).or(in_code),
                hint: r.hint,
                skill: r.skill,
                setting: r.setting,
                candidate_id: r.candidate_id,
                source: r.source,
            });
        }
    }
    let carried =
        arrow::compute::concat_batches(&schema, batches.iter().map(|b| &b.batch)).with_context(|| format!("{origin}: cannot combine shards"))?;
    Ok(Input { rows, carried: Some(carried) })
}

/// Validate's own columns of an `envs` row, after the contract's.
#[derive(Serialize, Deserialize)]
struct EnvExtras {
    class_name: Option<String>,
    probe_episodes: i64,
    probe_wins: i64,
    probe_max_turns: i64,
    solver: Option<String>,
    solver_episodes: Option<i64>,
    solver_wins: Option<i64>,
}

/// Validate's own columns of a `rejects` row, after the contract's.
#[derive(Serialize, Deserialize)]
struct RejectExtras {
    source: Option<String>,
    class_name: Option<String>,
    solver: Option<String>,
    solver_episodes: Option<i64>,
    solver_wins: Option<i64>,
}

/// One output table: the contract's rows, validate's extras, then the input's other columns
/// carried through for the selected rows.
fn build<R: Serialize, E: Serialize + serde::de::DeserializeOwned>(
    contract: &spade_schema::Table,
    rows: &[R],
    extras: &[E],
    carried: Option<&RecordBatch>,
    idx: &[usize],
) -> anyhow::Result<RecordBatch> {
    let base = contract.batch(rows).map_err(anyhow::Error::msg)?;
    let extras = spade_schema::traced_batch(extras).map_err(anyhow::Error::msg)?;
    Ok(spade_io::widen(&base, &[&extras], carried.map(|c| (c, idx)))?)
}

fn write(path: &str, batch: &RecordBatch, meta: &WriteMeta) -> anyhow::Result<usize> {
    let mut w = TableWriter::create(path, batch.schema(), meta)?;
    if batch.num_rows() > 0 {
        w.write(batch)?;
    }
    w.finish().with_context(|| format!("writing {path}"))
}

fn run(args: Args) -> anyhow::Result<()> {
    let start = Instant::now();
    let reward_range = args.reward_range;
    if args.max_turns == 0 {
        bail!("--max-turns must be at least 1");
    }
    if !(args.call_timeout > 0.0 && args.load_timeout > 0.0) {
        bail!("--call-timeout and --load-timeout must be positive");
    }
    let input = match py_files(&args.input)? {
        Some(files) => read_folder(&files)?,
        None => read_table(&args.input)?,
    };
    let n = input.rows.len();
    let cands: Vec<Candidate> = input
        .rows
        .iter()
        .map(|r| Candidate { code: r.code.clone(), hint: r.hint.clone(), setting: Setting::parse(r.setting.as_deref()), solver: r.solver.clone() })
        .collect();
    let cfg = CheckConfig {
        max_turns: args.max_turns,
        solver_seeds: (0..args.solver_seeds).collect(),
        require_solver: args.require_solver,
        ..CheckConfig::default()
    };
    let jobs = args.jobs.max(1).min(n.max(1));
    let mut verdicts: Vec<Verdict> = Vec::with_capacity(n);
    if n > 0 {
        let limits = Limits {
            load_timeout: Duration::from_secs_f64(args.load_timeout),
            call_timeout: Duration::from_secs_f64(args.call_timeout),
            memory_bytes: args.memory_mb << 20,
            reward_range,
            ..Limits::default()
        };
        let sb = Sandbox::new(SandboxConfig { jobs, limits, ..SandboxConfig::default() }).context("starting the sandbox")?;
        let pb = args.common.progress(Some(n as u64), "validating");
        let next = AtomicUsize::new(0);
        let slots: Vec<Mutex<Option<Verdict>>> = (0..n).map(|_| Mutex::new(None)).collect();
        std::thread::scope(|s| {
            for _ in 0..jobs {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    if i >= n {
                        break;
                    }
                    let v = validate::check(&sb, &cands[i], &cfg);
                    tracing::debug!(row = i, stage = v.stage.as_str(), status = %v.status, "{}", v.error);
                    *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(v);
                    pb.inc(1);
                });
            }
        });
        pb.finish_and_clear();
        verdicts = slots.into_iter().map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()).expect("every row checked")).collect();
    }
    let labels: Vec<String> = input
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| r.candidate_id.clone().or_else(|| r.source.clone()).map(|l| format!("{l} (row {})", i + 1)).unwrap_or(format!("row {}", i + 1)))
        .collect();
    let codes: Vec<Option<&str>> = input.rows.iter().map(|r| r.code.as_deref()).collect();
    let known: Vec<(String, String)> = if args.known.is_empty() {
        Vec::new()
    } else {
        spade::envs::read_design_memory(&args.known)?.into_iter().map(|e| (format!("known environment {}", e.env_id), e.code)).collect()
    };
    validate::mark_duplicates(&codes, &mut verdicts, &labels, &known);

    let (pass, fail): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| verdicts[i].passed());
    let rows = &input.rows;
    let setting = |r: &Row| Some(Setting::parse(r.setting.as_deref()));
    let solver_count = |i: usize, f: &dyn Fn(&validate::SolverStats) -> u32| verdicts[i].solver.as_deref().map(|s| f(s) as i64);
    let env_rows: Vec<EnvRow> = pass
        .iter()
        .map(|&i| EnvRow {
            candidate_id: rows[i].candidate_id.clone(),
            env_id: rows[i].code.as_deref().map(validate::env_id).unwrap_or_default(),
            code: rows[i].code.clone().unwrap_or_default(),
            hint: rows[i].hint.clone(),
            skill: rows[i].skill.clone(),
            setting: setting(&rows[i]),
            source: rows[i].source.clone(),
        })
        .collect();
    let env_extras: Vec<EnvExtras> = pass
        .iter()
        .map(|&i| EnvExtras {
            class_name: verdicts[i].class_name.clone(),
            probe_episodes: verdicts[i].probe.episodes as i64,
            probe_wins: verdicts[i].probe.wins as i64,
            probe_max_turns: verdicts[i].probe.max_episode_turns as i64,
            solver: rows[i].solver.clone(),
            solver_episodes: solver_count(i, &|s| s.episodes),
            solver_wins: solver_count(i, &|s| s.wins),
        })
        .collect();
    let envs = build(&spade_schema::ENVS, &env_rows, &env_extras, input.carried.as_ref(), &pass)?;
    let reject_rows: Vec<RejectRow> = fail
        .iter()
        .map(|&i| RejectRow {
            candidate_id: rows[i].candidate_id.clone(),
            env_id: rows[i].code.as_deref().map(validate::env_id),
            code: rows[i].code.clone(),
            hint: rows[i].hint.clone(),
            skill: rows[i].skill.clone(),
            setting: setting(&rows[i]),
            stage: verdicts[i].stage.as_str().to_string(),
            status: verdicts[i].status.as_str().to_string(),
            error: verdicts[i].error.clone(),
            validity: verdicts[i].validity,
        })
        .collect();
    let reject_extras: Vec<RejectExtras> = fail
        .iter()
        .map(|&i| RejectExtras {
            source: rows[i].source.clone(),
            class_name: verdicts[i].class_name.clone(),
            solver: rows[i].solver.clone(),
            solver_episodes: solver_count(i, &|s| s.episodes),
            solver_wins: solver_count(i, &|s| s.wins),
        })
        .collect();
    let rejects = build(&spade_schema::REJECTS, &reject_rows, &reject_extras, input.carried.as_ref(), &fail)?;

    let config = spade_cli::config_json(&args);
    let meta = |table: &str| WriteMeta {
        table: table.into(),
        seed: Some(args.common.seed),
        config: Some(config.clone()),
        tool: Some("spade-validate".into()),
    };
    write(&args.output, &envs, &meta("envs"))?;
    write(&args.rejects, &rejects, &meta("rejects"))?;

    let mut by_stage: std::collections::BTreeMap<&str, usize> = Default::default();
    for &i in &fail {
        *by_stage.entry(verdicts[i].stage.as_str()).or_default() += 1;
    }
    // The reference solvers: how many candidates brought one, and how many valid environments
    // (passed, or rejected only as duplicates or for their solver) it won every episode of.
    let checked: Vec<&Verdict> = verdicts.iter().filter(|v| matches!(v.stage, Stage::Passed | Stage::Duplicate | Stage::Solver)).collect();
    let with_solver = input.rows.iter().filter(|r| r.solver.is_some()).count();
    let winning = checked.iter().filter(|v| v.solver.as_ref().is_some_and(|s| s.won_all())).count();
    let solver = serde_json::json!({
        "candidates_with_solver": with_solver,
        "valid": checked.len(),
        "valid_with_winning_solver": winning,
        "winning_solver_share": if checked.is_empty() { 0.0 } else { winning as f64 / checked.len() as f64 },
    });
    let secs = start.elapsed().as_secs_f64();
    tracing::info!("validated {n} candidates in {secs:.1}s: {} envs, {} rejects {:?}; solvers: {solver}", pass.len(), fail.len(), by_stage);
    let _ = Stage::Passed;
    args.common.metrics(
        "spade-validate",
        serde_json::json!({
            "candidates": n, "envs": pass.len(), "rejects": fail.len(), "by_stage": by_stage, "solver": solver,
            "seconds": secs, "candidates_per_s": if secs > 0.0 { n as f64 / secs } else { 0.0 }, "config": config,
        }),
    )?;
    Ok(())
}
