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
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use arrow::array::RecordBatch;
use clap::Parser;
use serde::{Deserialize, Serialize};
use spade_cli::Common;
use spade_io::{TableReader, TableWriter, WriteMeta};
use spade_sandbox::validate::{self, Candidate, CheckConfig, Origin, Setting, Verdict};
use spade_sandbox::{Limits, Sandbox, SandboxConfig};

const EXAMPLES: &str = "\
Examples:
  spade-validate candidates.parquet -o envs.parquet --rejects rejects.parquet --jobs 2
  spade-validate data/seed-envs -o seed-envs.parquet --rejects seed-rejects.jsonl
  spade-validate rlve:official16 gem:easy rg:chain_sum -o foreign.parquet --rejects foreign-rejects.parquet
  spade-validate pool.jsonl -o envs.jsonl --rejects rejects.jsonl --reward-range 0,1 --max-turns 12";

/// Check candidate environments in the sandbox; write the ones that pass and the rejects.
#[derive(Debug, Parser, Serialize)]
#[command(name = "spade-validate", version, about, long_about = None, after_help = EXAMPLES)]
struct Args {
    /// A candidates table (Parquet/JSONL, several shards or a glob), a folder of .py environments, or
    /// other projects' environments by name: rg:<task>, rlve:<Identifier>[?difficulty=N|L..H],
    /// gem:<Game>-v0-<level>, textarena:<Game>-v0 (aliases rg:easy, rlve:official16, rlve:all,
    /// gem:easy).
    #[arg(required = true, value_name = "CANDIDATES|FOLDER|NAME")]
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

    /// Keep games environments whose answer changes with the seed while the first observation
    /// does not (stage undetermined, on by default): seeds showing the same observation are won by
    /// different answers (the probes' winning actions and the environment's plain attributes,
    /// such as `self.answer`), and neither trying those answers in turn nor the reply to any
    /// probe tells the seeds apart.
    #[arg(long)]
    allow_undetermined: bool,

    /// The agent's model (.gguf file or folder): with it, an environment whose first prompt (the
    /// agent's system prompt, the first observation, its tools and the hint, rendered as
    /// spade-rollout renders it) leaves less than --reply-tokens of the model's context is
    /// rejected (stage interface): every episode of it would end before the agent's first reply.
    #[arg(long, value_name = "PATH")]
    model: Option<PathBuf>,

    /// With --model: tokens of the agent's first reply that must fit after the first prompt (a
    /// round passes its rollout's --max-new-tokens).
    #[arg(long, default_value_t = 256, value_name = "N")]
    reply_tokens: usize,

    /// With --model: the agent's prompt templates, as spade-rollout --prompts [default: built in].
    #[arg(long, value_name = "DIR")]
    prompts: Option<PathBuf>,

    /// Salt of the probe episodes' fresh seeds (besides the fixed 0, 1, 2, five 63-bit seeds per
    /// candidate, drawn from this salt and its code, that an environment cannot tell from play's).
    /// Default: drawn at random (and logged), so no environment can know them in advance; give it
    /// to repeat a run exactly.
    #[arg(long, value_name = "N")]
    probe_seed: Option<u64>,

    /// Solver episodes (seeds 0..N).
    #[arg(long, default_value_t = 3, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    solver_seeds: u64,

    #[command(flatten)]
    common: Common,
}

/// The agent's model and prompt templates, for the first-prompt check (`--model`, `--prompts`).
struct Agent {
    model: spade_model::Model,
    templates: spade_rollout::Templates,
}

impl Agent {
    fn load(path: &Path, prompts: Option<&Path>) -> anyhow::Result<Agent> {
        let model = spade_model::load(path, &spade_model::candle_core::Device::Cpu).with_context(|| format!("loading model {}", path.display()))?;
        Ok(Agent { model, templates: spade_rollout::Templates::from_dir_or_builtin(prompts)? })
    }
}

/// Reject the passed candidates whose first prompt (with the hint: the hint arm's is the longer)
/// leaves less than `reply` tokens of the agent's context.
fn first_prompts_fit(agent: &Agent, reply: usize, cands: &[Candidate], verdicts: &mut [Verdict]) -> anyhow::Result<()> {
    let (model, templates) = (&agent.model, &agent.templates);
    let policy = spade_rollout::ModelPolicy { model, params: Default::default() };
    let format = spade_rollout::TurnFormat::learn(model.chat_template())?;
    let ctx = model.context_length();
    for (c, v) in cands.iter().zip(verdicts.iter_mut()) {
        let Some(first) = v.first.as_ref().filter(|_| v.passed()) else { continue };
        let hint = c.hint.as_deref().filter(|h| !h.trim().is_empty());
        let n = spade_rollout::first_prompt(&policy, templates, &format, c.setting, first, hint)?.tokens.len();
        if n + reply > ctx {
            v.reject(
                validate::Stage::Interface,
                spade_sandbox::Status::InvalidResult,
                format!(
                    "the first prompt is {n} tokens{}: the agent's context of {ctx} leaves {} for its first reply, under --reply-tokens {reply}",
                    if hint.is_some() { " with the hint" } else { "" },
                    ctx.saturating_sub(n)
                ),
            );
        }
    }
    Ok(())
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

/// The input: each row's candidate and what identifies it, and the table (all rows, unified
/// schema) to carry columns from (None for a folder).
struct Input {
    cands: Vec<Candidate>,
    origins: Vec<Origin>,
    carried: Option<RecordBatch>,
}

/// One input row: the code (a solver after its marker split off, unless `solver` gives one), its
/// header or columns.
fn candidate(code: Option<&str>, solver: Option<String>, hint: Option<String>, setting: Option<&str>) -> Candidate {
    let (code, in_code) = validate::split_solver_opt(code);
    Candidate { code, hint, setting: Setting::parse(setting), solver: solver.filter(|x| !x.trim().is_empty()).or(in_code) }
}

fn is_py(p: &Path) -> bool {
    p.is_file() && p.extension().is_some_and(|e| e == "py")
}

/// A seed input: a `.py` file, or a foreign environment's name ([`spade::foreign`]).
enum Seed {
    File(PathBuf),
    Foreign(String),
}

/// The seed environments named by the inputs, when they all are folders of `.py` files, `.py`
/// files or foreign environments (`rg:chain_sum`).
fn seed_inputs(inputs: &[String]) -> anyhow::Result<Option<Vec<Seed>>> {
    let mut files = Vec::new();
    for i in inputs {
        let p = Path::new(i);
        if spade::foreign::is_foreign(i) {
            files.push(Seed::Foreign(i.clone()));
        } else if p.is_dir() {
            let found = spade_design::memory::py_files(p).with_context(|| format!("{i}: cannot read folder"))?;
            if found.is_empty() {
                return Ok(None);
            }
            files.extend(found.into_iter().map(Seed::File));
        } else if is_py(p) {
            files.push(Seed::File(p.to_path_buf()));
        } else {
            return Ok(None);
        }
    }
    Ok(Some(files))
}

fn read_folder(seeds: &[Seed]) -> anyhow::Result<Input> {
    let mut input = Input { cands: Vec::new(), origins: Vec::new(), carried: None };
    let names: Vec<String> = seeds.iter().filter_map(|s| if let Seed::Foreign(n) = s { Some(n.clone()) } else { None }).collect();
    let mut foreign = if names.is_empty() { Vec::new() } else { spade::foreign::expand(&names, &spade_evals::venv_python())? }.into_iter();
    for s in seeds {
        match s {
            Seed::File(f) => {
                let e = spade_design::memory::read_seed_file(f)?;
                input.cands.push(Candidate { code: Some(e.code), hint: e.hint, setting: e.setting.unwrap_or_default(), solver: e.solver });
                input.origins.push(Origin { candidate_id: None, skill: e.skill, source: f.file_name().map(|n| n.to_string_lossy().to_string()) });
            }
            // an alias (rg:easy) stands for several
            Seed::Foreign(_) => {
                for f in foreign.next().unwrap_or_default() {
                    input.cands.push(Candidate { code: Some(f.code), hint: None, setting: Setting::Games, solver: None });
                    input.origins.push(Origin { candidate_id: None, skill: Some(f.name.clone()), source: Some(f.name) });
                }
            }
        }
    }
    Ok(input)
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
    let mut input = Input { cands: Vec::new(), origins: Vec::new(), carried: None };
    for b in &batches {
        for r in b.rows::<InRow>(&spade_schema::CANDIDATES)? {
            input.cands.push(candidate(r.final_code.as_deref().or(r.code.as_deref()), r.solver, r.hint, r.setting.as_deref()));
            input.origins.push(Origin { candidate_id: r.candidate_id, skill: r.skill, source: r.source });
        }
    }
    let carried =
        arrow::compute::concat_batches(&schema, batches.iter().map(|b| &b.batch)).with_context(|| format!("{origin}: cannot combine shards"))?;
    input.carried = Some(carried);
    Ok(input)
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
    // before any environment runs: a bad --model or --prompts costs nothing already computed
    let agent = args.model.as_deref().map(|p| Agent::load(p, args.prompts.as_deref())).transpose()?;
    let input = match seed_inputs(&args.input)? {
        Some(seeds) => read_folder(&seeds)?,
        None => read_table(&args.input)?,
    };
    let (cands, origins) = (&input.cands, &input.origins);
    let n = cands.len();
    // std's hasher keys come from the OS's random source
    let probe_salt =
        args.probe_seed.unwrap_or_else(|| std::hash::BuildHasher::hash_one(&std::collections::hash_map::RandomState::new(), Instant::now()));
    tracing::info!(probe_seed = probe_salt, "fresh probe seeds drawn from --probe-seed {probe_salt}");
    let cfg = CheckConfig {
        max_turns: args.max_turns,
        probe_salt,
        solver_seeds: (0..args.solver_seeds).collect(),
        require_solver: args.require_solver,
        allow_undetermined: args.allow_undetermined,
        ..CheckConfig::default()
    };
    let mut verdicts: Vec<Verdict> = Vec::new();
    if n > 0 {
        let limits = Limits {
            load_timeout: Duration::from_secs_f64(args.load_timeout),
            call_timeout: Duration::from_secs_f64(args.call_timeout),
            memory_bytes: args.memory_mb << 20,
            reward_range,
            ..Limits::default()
        };
        let jobs = args.jobs.clamp(1, n);
        let sb_cfg =
            spade::foreign::sandbox_for(cands.iter().filter_map(|c| c.code.as_deref()), SandboxConfig { jobs, limits, ..SandboxConfig::default() })?;
        let sb = Sandbox::new(sb_cfg).context("starting the sandbox")?;
        let pb = args.common.progress(Some(n as u64), "validating");
        verdicts = validate::check_all(&sb, cands, &cfg, jobs, &|| pb.inc(1));
        pb.finish_and_clear();
    }
    let labels: Vec<String> = origins
        .iter()
        .enumerate()
        .map(|(i, r)| r.candidate_id.clone().or_else(|| r.source.clone()).map(|l| format!("{l} (row {})", i + 1)).unwrap_or(format!("row {}", i + 1)))
        .collect();
    let codes: Vec<Option<&str>> = cands.iter().map(|c| c.code.as_deref()).collect();
    let known: Vec<(String, String)> = if args.known.is_empty() {
        Vec::new()
    } else {
        spade::envs::read_design_memory(&args.known)?.into_iter().map(|e| (format!("known environment {}", e.env_id), e.code)).collect()
    };
    if let Some(agent) = &agent {
        first_prompts_fit(agent, args.reply_tokens, cands, &mut verdicts)?;
    }
    // Foreign environments' adapters differ only in the name they carry: one per name (exact
    // duplicates), never compared for near duplicates with one another or with other code.
    let adapter = |c: &str| spade::foreign::is_adapter(c);
    let plain: Vec<Option<&str>> = codes.iter().map(|c| c.filter(|c| !adapter(c))).collect();
    let (known_adapters, known_plain): (Vec<_>, Vec<_>) = known.into_iter().partition(|(_, c)| adapter(c));
    validate::mark_duplicates(&plain, &mut verdicts, &labels, &known_plain);
    let mut seen: std::collections::HashMap<String, String> = known_adapters.into_iter().map(|(l, c)| (validate::env_id(&c), l)).collect();
    for i in 0..n {
        let Some(code) = codes[i].filter(|c| adapter(c) && verdicts[i].passed()) else { continue };
        let id = validate::env_id(code);
        match seen.get(&id) {
            Some(l) => verdicts[i].duplicate(format!("exact duplicate of {l} (env_id {id})")),
            None => {
                seen.insert(id, labels[i].clone());
            }
        }
    }

    let (pass, fail): (Vec<usize>, Vec<usize>) = (0..n).partition(|&i| verdicts[i].passed());
    let (env_rows, env_extras): (Vec<_>, Vec<_>) = pass.iter().map(|&i| verdicts[i].env_row(&cands[i], &origins[i])).unzip();
    let envs = build(&spade_schema::ENVS, &env_rows, &env_extras, input.carried.as_ref(), &pass)?;
    let (reject_rows, reject_extras): (Vec<_>, Vec<_>) = fail.iter().map(|&i| verdicts[i].reject_row(&cands[i], &origins[i])).unzip();
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
    let solver = serde_json::to_value(validate::SolverSummary::of(cands, &verdicts))?;
    let secs = start.elapsed().as_secs_f64();
    tracing::info!("validated {n} candidates in {secs:.1}s: {} envs, {} rejects {:?}; solvers: {solver}", pass.len(), fail.len(), by_stage);
    args.common.metrics(
        "spade-validate",
        serde_json::json!({
            "candidates": n, "envs": pass.len(), "rejects": fail.len(), "by_stage": by_stage, "solver": solver,
            "seconds": secs, "candidates_per_s": if secs > 0.0 { n as f64 / secs } else { 0.0 }, "config": config,
        }),
    )?;
    Ok(())
}
