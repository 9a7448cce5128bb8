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
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use arrow::array::{Array, ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray, UInt32Array};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use clap::Parser;
use serde::Serialize;
use spade_cli::Common;
use spade_io::{TableReader, TableWriter, WriteMeta};
use spade_sandbox::validate::{self, Candidate, CheckConfig, Setting, Stage, Verdict};
use spade_sandbox::{Limits, Sandbox, SandboxConfig};

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

fn strings(b: &spade_io::Batch, name: &str) -> anyhow::Result<Option<Vec<Option<String>>>> {
    let Some(arr) = b.opt_column(name, &DataType::Utf8)? else { return Ok(None) };
    let arr = arr.as_any().downcast_ref::<StringArray>().context("string column")?;
    Ok(Some((0..arr.len()).map(|i| (!arr.is_null(i)).then(|| arr.value(i).to_string())).collect()))
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
        let n = b.num_rows();
        let col = |name: &str| -> anyhow::Result<Vec<Option<String>>> { Ok(strings(b, name)?.unwrap_or_else(|| vec![None; n])) };
        let (code, final_code) = (col("code")?, col("final_code")?);
        let (hint, skill, setting, cid, source) = (col("hint")?, col("skill")?, col("setting")?, col("candidate_id")?, col("source")?);
        let solver = col("solver")?;
        for i in 0..n {
            let (code, in_code) = validate::split_solver_opt(final_code[i].as_deref().or(code[i].as_deref()));
            rows.push(Row {
                code,
                solver: solver[i].clone().filter(|x| !x.trim().is_empty()).or(in_code),
                hint: hint[i].clone(),
                skill: skill[i].clone(),
                setting: setting[i].clone(),
                candidate_id: cid[i].clone(),
                source: source[i].clone(),
            });
        }
    }
    let carried =
        arrow::compute::concat_batches(&schema, batches.iter().map(|b| &b.batch)).with_context(|| format!("{origin}: cannot combine shards"))?;
    Ok(Input { rows, carried: Some(carried) })
}

fn str_col(v: Vec<Option<String>>) -> ArrayRef {
    Arc::new(StringArray::from(v))
}

/// Build one output table: the contract's columns, validate's extras, then the input's other
/// columns carried through for the selected rows.
fn build(
    contract: &spade_schema::Table,
    extras: &[(Field, ArrayRef)],
    own: Vec<(&'static str, ArrayRef)>,
    carried: Option<&RecordBatch>,
    idx: &[usize],
) -> anyhow::Result<RecordBatch> {
    let mut fields: Vec<Field> = Vec::new();
    let mut cols: Vec<ArrayRef> = Vec::new();
    for c in contract.columns {
        let arr = own
            .iter()
            .find(|(n, _)| *n == c.name)
            .map(|(_, a)| a.clone())
            .unwrap_or_else(|| arrow::array::new_null_array(&c.ty.data_type(), idx.len()));
        fields.push(c.field());
        cols.push(arr);
    }
    for (f, a) in extras {
        fields.push(f.clone());
        cols.push(a.clone());
    }
    if let Some(batch) = carried {
        let take = UInt32Array::from(idx.iter().map(|&i| i as u32).collect::<Vec<_>>());
        for (f, col) in batch.schema().fields().iter().zip(batch.columns()) {
            if fields.iter().any(|g| g.name() == f.name()) {
                continue;
            }
            fields.push(Field::new(f.name(), f.data_type().clone(), true));
            cols.push(arrow::compute::take(col.as_ref(), &take, None)?);
        }
    }
    let schema: SchemaRef = Arc::new(Schema::new(fields));
    Ok(RecordBatch::try_new_with_options(schema, cols, &arrow::array::RecordBatchOptions::new().with_row_count(Some(idx.len())))?)
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
        spade_design::memory::read_memory(&args.known)?.into_iter().map(|e| (format!("known environment {}", e.env_id), e.code)).collect()
    };
    validate::mark_duplicates(&codes, &mut verdicts, &labels, &known);

    let (pass, fail): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| verdicts[i].passed());
    let rows = &input.rows;
    let pick = |idx: &[usize], f: &dyn Fn(&Row) -> Option<String>| str_col(idx.iter().map(|&i| f(&rows[i])).collect());
    let env_ids = |idx: &[usize]| str_col(idx.iter().map(|&i| rows[i].code.as_deref().map(validate::env_id)).collect());
    let setting = |r: &Row| Some(Setting::parse(r.setting.as_deref()).as_str().to_string());
    let common_cols = |idx: &[usize]| -> Vec<(&'static str, ArrayRef)> {
        vec![
            ("candidate_id", pick(idx, &|r| r.candidate_id.clone())),
            ("env_id", env_ids(idx)),
            ("code", pick(idx, &|r| r.code.clone())),
            ("hint", pick(idx, &|r| r.hint.clone())),
            ("skill", pick(idx, &|r| r.skill.clone())),
            ("setting", pick(idx, &setting)),
            ("source", pick(idx, &|r| r.source.clone())),
        ]
    };
    let class_col = |idx: &[usize]| str_col(idx.iter().map(|&i| verdicts[i].class_name.clone()).collect());
    let int = |idx: &[usize], f: &dyn Fn(&Verdict) -> i64| -> ArrayRef {
        Arc::new(Int64Array::from(idx.iter().map(|&i| f(&verdicts[i])).collect::<Vec<_>>()))
    };
    let opt_int = |idx: &[usize], f: &dyn Fn(&validate::SolverStats) -> i64| -> ArrayRef {
        Arc::new(Int64Array::from(idx.iter().map(|&i| verdicts[i].solver.as_deref().map(f)).collect::<Vec<_>>()))
    };
    let solver_extras = |idx: &[usize]| -> Vec<(Field, ArrayRef)> {
        vec![
            (Field::new("solver", DataType::Utf8, true), pick(idx, &|r| r.solver.clone())),
            (Field::new("solver_episodes", DataType::Int64, true), opt_int(idx, &|s| s.episodes as i64)),
            (Field::new("solver_wins", DataType::Int64, true), opt_int(idx, &|s| s.wins as i64)),
        ]
    };
    let mut env_extras: Vec<(Field, ArrayRef)> = vec![
        (Field::new("class_name", DataType::Utf8, true), class_col(&pass)),
        (Field::new("probe_episodes", DataType::Int64, false), int(&pass, &|v| v.probe.episodes as i64)),
        (Field::new("probe_wins", DataType::Int64, false), int(&pass, &|v| v.probe.wins as i64)),
        (Field::new("probe_max_turns", DataType::Int64, false), int(&pass, &|v| v.probe.max_episode_turns as i64)),
    ];
    env_extras.extend(solver_extras(&pass));
    let envs = build(&spade_schema::ENVS, &env_extras, common_cols(&pass), input.carried.as_ref(), &pass)?;
    let mut rej_own = common_cols(&fail);
    rej_own.push(("stage", str_col(fail.iter().map(|&i| Some(verdicts[i].stage.as_str().to_string())).collect())));
    rej_own.push(("status", str_col(fail.iter().map(|&i| Some(verdicts[i].status.as_str().to_string())).collect())));
    rej_own.push(("error", str_col(fail.iter().map(|&i| Some(verdicts[i].error.clone())).collect())));
    rej_own.push(("validity", Arc::new(Float64Array::from(fail.iter().map(|&i| verdicts[i].validity).collect::<Vec<_>>()))));
    let mut rej_extras: Vec<(Field, ArrayRef)> = vec![
        (Field::new("source", DataType::Utf8, true), pick(&fail, &|r| r.source.clone())),
        (Field::new("class_name", DataType::Utf8, true), class_col(&fail)),
    ];
    rej_extras.extend(solver_extras(&fail));
    let rejects = build(&spade_schema::REJECTS, &rej_extras, rej_own, input.carried.as_ref(), &fail)?;

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
