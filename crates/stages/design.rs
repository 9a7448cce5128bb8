//! `spade-design`: write candidate environments (code + privileged hint) grounded on documents,
//! conditioned on the environment memory.
//!
//! For every document of `--docs` (a `docs` table: `doc_id`, `text`, optional `domain`) the stage
//! picks a skill (round-robin over `--skills`, shifted by `--round`), renders one designer prompt
//! from the templates in `--prompts` (the document, up to `--examples` seed environments of the
//! memory as examples and `--negatives` too-easy / too-hard ones as negatives, all cut to fit the
//! model's context with room for `--max-new-tokens`), and samples `--per-doc` responses, all
//! requests of the call generated in batches. Each response is parsed into code, hint and skill
//! tags; an unparseable one is still written, with `parse_error` and null code.
//!
//! `--repair N`: a candidate that fails the checks of `spade-validate` (run here in the sandbox)
//! is shown its error and tries again, up to N times; the row keeps the first response (what is
//! trained) and stores the last parsed code as `final_code`. `--hint self`: after design and
//! repair, a second call of the same model reads `final_code` and writes the hint (its tokens are
//! stored in the `hint_*` columns). The memory is a `memory` table or a folder of seed `.py`
//! environments; without `--memory` the repository's `data/seed-envs/` serves.

#![forbid(unsafe_code)]

use std::process::ExitCode;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Parser;
use serde::Serialize;
use spade::envs::{read_design_memory, read_docs};
use spade_cli::Common;
use spade_design::memory::set_env_ids;
use spade_design::prompt::{default_prompts_dir, default_seed_dir, HintMode, Templates};
use spade_design::rows::CandidateRow;
use spade_design::session::{design, DesignConfig, Designed};
use spade_design::MemoryRow;
use spade_io::{TableWriter, WriteMeta};
use spade_schema::CANDIDATES;

const EXAMPLES: &str = "\
Examples:
  spade-design --docs docs.parquet --memory memory.parquet -o candidates.parquet --per-doc 4 --round 3
  spade-design --docs docs.parquet -o candidates.jsonl --setting tool-use --hint self --repair 2
  spade-design --docs docs.parquet --memory data/seed-envs -o c.parquet --skills logical-deduction,optimisation
  spade-design --no-corpus --groups 4 --no-memory -o ablation.parquet --model models/ckpt-12";

/// Write candidate environments (code + privileged hint) grounded on documents, conditioned on the environment memory.
#[derive(Debug, Parser, Serialize)]
#[command(name = "spade-design", version, about, long_about = None, after_help = EXAMPLES)]
struct Args {
    #[command(flatten)]
    #[serde(skip)]
    model: spade_model::ModelArgs,

    #[command(flatten)]
    #[serde(skip)]
    server: spade_model::ServerArgs,

    /// Documents to ground on (a `docs` table: `doc_id`, `text`, optional `domain`).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    docs: Vec<String>,

    /// Environment memory: `memory` tables or folders of seed .py environments [default: data/seed-envs].
    #[arg(long, value_name = "FILE", num_args = 1..)]
    memory: Vec<String>,

    /// Output `candidates` table.
    #[arg(short, long, value_name = "FILE")]
    output: String,

    /// Designer samples per document (a designer group needs at least 2).
    #[arg(long, default_value_t = 4)]
    per_doc: usize,

    /// games, tool-use, or a share of each over the documents (`games,tool-use`: half each;
    /// `games=3,tool-use=1`: three in four games), taken in turn by the round's documents.
    #[arg(long, default_value = "games", value_parser = parse_settings)]
    setting: Settings,

    /// inline (the designer writes the hint) or self (a second call writes it).
    #[arg(long, value_enum, default_value_t = HintMode::Inline)]
    hint: HintMode,

    /// Repair turns after a validation failure.
    #[arg(long, default_value_t = 0)]
    repair: usize,

    /// Prompt without memory examples (ablation).
    #[arg(long)]
    no_memory: bool,

    /// Prompt without a document (ablation).
    #[arg(long)]
    no_corpus: bool,

    /// Prompts without a document when --no-corpus is given and --docs is not [default: 8].
    #[arg(long, value_name = "N")]
    groups: Option<usize>,

    /// Skill taxonomy, assigned round-robin over documents (shifted by --round) [default: the
    /// setting's six: games mathematical-reasoning, logical-deduction, spatial-reasoning,
    /// pattern-recognition, optimisation, causal-inference; tool-use api-orchestration,
    /// data-retrieval, state-modification, error-recovery, tool-selection, multi-step-workflow].
    #[arg(long, value_delimiter = ',')]
    skills: Option<Vec<String>>,

    /// Skills per round: 0 uses every skill each round; k uses a window of k skills that advances by k
    /// each round (round r: skills (r−1)·k …, wrapping), the paper's two-skill ablation with k = 2.
    #[arg(long, default_value_t = 0, value_name = "K")]
    skills_per_round: usize,

    /// Seed environments shown as examples per prompt.
    #[arg(long, default_value_t = 2)]
    examples: usize,

    /// Too-easy / too-hard environments described as negatives per prompt.
    #[arg(long, default_value_t = 2)]
    negatives: usize,

    /// Folder of the prompt templates [default: data/prompts].
    #[arg(long, value_name = "DIR")]
    prompts: Option<std::path::PathBuf>,

    /// Nucleus sampling mass (1 = off).
    #[arg(long, default_value_t = 0.95)]
    top_p: f32,

    /// Keep only the k most likely tokens (0 = off).
    #[arg(long, default_value_t = 20)]
    top_k: usize,

    /// Tokens per designer response; the prompt is cut to fit the rest of the context.
    #[arg(long, default_value_t = 2048)]
    max_new_tokens: usize,

    /// Sequences decoding at once (slots); one that finishes hands its slot to the next waiting
    /// prompt (`--batch` is an alias)
    #[arg(long = "slots", visible_alias = "batch", default_value_t = 32, value_name = "N")]
    batch: usize,

    /// Temperature of the --hint self call.
    #[arg(long, default_value_t = 0.3)]
    hint_temperature: f32,

    /// Tokens of the --hint self response.
    #[arg(long, default_value_t = 160)]
    hint_max_new_tokens: usize,

    /// Sandbox workers for the checks of --repair.
    #[arg(long, default_value_t = 1)]
    jobs: usize,

    /// Turn limit of the probe episodes in the checks of --repair (as spade-validate).
    #[arg(long, default_value_t = 8)]
    max_turns: u32,

    #[command(flatten)]
    common: Common,
}

/// `--setting`: the cycle of settings the documents take in turn ([`spade_design::parse_settings`]).
/// Recorded in the configuration as written.
#[derive(Debug, Clone, PartialEq)]
struct Settings(Vec<spade_design::Setting>, String);

impl Serialize for Settings {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.1)
    }
}

fn parse_settings(s: &str) -> Result<Settings, String> {
    spade_design::parse_settings(s).map(|c| Settings(c, s.to_string()))
}

fn main() -> ExitCode {
    spade_cli::main(|a: &Args| &a.common, run)
}

fn run(args: Args) -> anyhow::Result<()> {
    let start = Instant::now();
    if args.per_doc == 0 {
        bail!("--per-doc must be at least 1");
    }
    if args.skills.as_ref().is_some_and(|k| k.iter().all(|s| s.trim().is_empty())) {
        bail!("--skills is empty");
    }
    if args.docs.is_empty() && !args.no_corpus {
        bail!("--docs is required (or --no-corpus for prompts without a document)");
    }
    let docs = if args.docs.is_empty() { Vec::new() } else { read_docs(&args.docs)? };
    let memory: Vec<MemoryRow> = if args.no_memory {
        Vec::new()
    } else {
        let inputs = if args.memory.is_empty() { vec![default_seed_dir().to_string_lossy().to_string()] } else { args.memory.clone() };
        let mut m = read_design_memory(&inputs).with_context(|| format!("reading the memory {}", inputs.join(" ")))?;
        set_env_ids(&mut m, spade_sandbox::validate::env_id);
        m
    };
    let prompts_dir = args.prompts.clone().unwrap_or_else(default_prompts_dir);
    let templates = Templates::load(&prompts_dir)?;
    let model_path = args.model.model_path();
    let policy_version = spade_model::checkpoint::policy_version(&model_path)?;
    let mut config = spade_cli::config_json(&args);
    args.model.record_sampling(&mut config);
    args.server.record(&mut config);
    if let Some(o) = config.as_object_mut() {
        o.insert("prompts".into(), prompts_dir.display().to_string().into());
    }
    let meta =
        WriteMeta { table: "candidates".into(), seed: Some(args.common.seed), config: Some(config.clone()), tool: Some("spade-design".into()) };

    let n_groups = if args.no_corpus && docs.is_empty() { args.groups.unwrap_or(8) } else { docs.len() };
    if n_groups == 0 {
        let mut w = TableWriter::create(&args.output, spade_schema::CANDIDATES.schema(), &meta)?;
        w.write(&CANDIDATES.batch::<CandidateRow>(&[]).map_err(anyhow::Error::msg)?)?;
        w.finish()?;
        tracing::info!("no documents: wrote an empty candidates table to {}", args.output);
        return Ok(());
    }

    if args.server.server.is_some() && args.hint == HintMode::SelfCall && !(args.hint_temperature == 0.0 || args.hint_temperature == 1.0) {
        bail!(
            "--hint self through --server needs --hint-temperature 0 or 1 (servers report log-probs at temperature 1), not {}",
            args.hint_temperature
        );
    }
    let generator = args.model.load_generator(&args.server).with_context(|| format!("loading model {}", model_path.display()))?;
    let cfg = DesignConfig {
        seed: args.common.seed,
        round: args.common.round,
        per_doc: args.per_doc,
        groups: n_groups,
        no_corpus: args.no_corpus,
        settings: args.setting.0.clone(),
        skills: args.skills.clone(),
        skills_per_round: args.skills_per_round,
        hint: args.hint,
        examples: args.examples,
        negatives: args.negatives,
        params: args.model.sampling(args.top_p, args.top_k, args.max_new_tokens, args.batch),
        repair: args.repair,
        jobs: args.jobs,
        max_turns: args.max_turns,
        hint_temperature: args.hint_temperature,
        hint_max_new_tokens: args.hint_max_new_tokens,
        policy_version,
    };
    let Designed { rows, groups, parsed_first, passed_checks } =
        design(&*generator, &templates, &memory, &docs, &cfg, &|n, label| args.common.progress(Some(n), label))?;
    let batch = CANDIDATES.batch(&rows).map_err(anyhow::Error::msg)?;
    let mut w = TableWriter::create(&args.output, batch.schema(), &meta)?;
    w.write(&batch)?;
    let n = w.finish().with_context(|| format!("writing {}", args.output))?;
    let parsed_final = rows.iter().filter(|r| r.final_code.is_some()).count();
    let tokens: usize = rows.iter().map(|r| r.response_ids.len()).sum();
    if let Some(stats) = generator.engine_stats() {
        tracing::info!("{stats}");
    }
    tracing::info!(
        "{n} candidates from {} prompts into {}: {parsed_first} parsed{}",
        groups.len(),
        args.output,
        match passed_checks {
            Some(p) => format!(", {parsed_final} with code after repair, {p} passed the checks"),
            None => String::new(),
        }
    );
    let prompt_tokens: Vec<usize> = groups.iter().map(|g| g.prompt.info.tokens).collect();
    args.common.metrics(
        "spade-design",
        serde_json::json!({
            "candidates": n,
            "prompts": groups.len(),
            "parsed": parsed_first,
            "parsed_final": parsed_final,
            "passed_checks": passed_checks,
            "response_tokens": tokens,
            "prompt_tokens_max": prompt_tokens.iter().max(),
            "docs_cut": groups.iter().filter(|g| g.prompt.info.doc_cut).count(),
            "seconds": start.elapsed().as_secs_f64(),
            "policy_version": policy_version,
            "config": config,
        }),
    )?;
    Ok(())
}
