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
use spade_cli::Common;
use spade_design::memory::{read_memory, set_env_ids, MemoryEntry};
use spade_design::parse_response;
use spade_design::prompt::{self, default_prompts_dir, default_seed_dir, HintMode, PromptSpec, Templates};
use spade_design::rows::{candidate_id, candidates_batch, doc_key, sample_seed, CandidateRow};
use spade_io::{TableWriter, WriteMeta};
use spade_model::{FinishReason, Generation, GenerationRequest, Message, Model, SamplingParams};

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
struct Settings(Vec<String>, String);

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

/// One prompt group: a document (or none) and its skill.
struct Group {
    doc_id: Option<String>,
    key: String,
    skill: String,
    setting: String,
    prompt: prompt::Prompt,
}

fn finish_str(f: FinishReason) -> &'static str {
    match f {
        FinishReason::Eos => "eos",
        FinishReason::Stop => "stop",
        FinishReason::Length => "length",
    }
}

/// Generates `reqs` (`max_batch` at a time, a finished one's slot going to the next), advancing `pb`.
fn generate(model: &Model, reqs: &[GenerationRequest], params: &SamplingParams, inc: impl Fn(u64)) -> anyhow::Result<Vec<Generation>> {
    model.generate_with_progress(reqs, params, &mut |n| inc(n as u64)).context("generation")
}

fn run(args: Args) -> anyhow::Result<()> {
    let start = Instant::now();
    if args.per_doc == 0 {
        bail!("--per-doc must be at least 1");
    }
    if args.skills.as_ref().is_some_and(|k| k.iter().all(|s| s.trim().is_empty())) {
        bail!("--skills is empty");
    }
    // The skills of a setting: --skills for every setting, else the setting's own six.
    let skills_of = |setting: &str| -> Vec<String> {
        match &args.skills {
            Some(k) => k.iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect(),
            None => spade_design::default_skills(setting).iter().map(|s| s.to_string()).collect(),
        }
    };
    if args.docs.is_empty() && !args.no_corpus {
        bail!("--docs is required (or --no-corpus for prompts without a document)");
    }
    let docs = if args.docs.is_empty() { Vec::new() } else { spade_design::read_docs(&args.docs)? };
    let memory: Vec<MemoryEntry> = if args.no_memory {
        Vec::new()
    } else {
        let inputs = if args.memory.is_empty() { vec![default_seed_dir().to_string_lossy().to_string()] } else { args.memory.clone() };
        let mut m = read_memory(&inputs).with_context(|| format!("reading the memory {}", inputs.join(" ")))?;
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
        w.write(&candidates_batch(&[])?)?;
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
    let model = args.model.load_with_server(&args.server).with_context(|| format!("loading model {}", model_path.display()))?;
    let ctx = model.context_length();
    if args.max_new_tokens + 16 > ctx {
        bail!("--max-new-tokens {} leaves no room for the prompt in the model's context of {ctx} tokens", args.max_new_tokens);
    }
    let budget = ctx - args.max_new_tokens;
    let (seed, round) = (args.common.seed, args.common.round);

    // Prompts, one per group.
    let mut groups = Vec::with_capacity(n_groups);
    for i in 0..n_groups {
        let doc = docs.get(i);
        let setting = spade_design::setting_for(&args.setting.0, round, i).to_string();
        let spec = PromptSpec { setting: &setting, hint_mode: args.hint, examples: args.examples, negatives: args.negatives };
        let skills = skills_of(&setting);
        let skill = spade_design::skill_for(&skills, args.skills_per_round, round, i).to_string();
        let doc_id = doc.map(|d| d.doc_id.clone());
        let key = doc_key(doc_id.as_deref(), i);
        let tie = format!("{seed}/{round}/{key}");
        let document = if args.no_corpus { None } else { doc };
        let prompt = prompt::group_prompt(&model, &templates, &spec, &memory, document, &skill, &tie, budget)
            .with_context(|| format!("designer prompt for document {}", doc_id.as_deref().unwrap_or("(none)")))?;
        let doc_id = if args.no_corpus { None } else { doc_id };
        groups.push(Group { doc_id, key, skill, setting, prompt });
    }
    let mut rows: Vec<CandidateRow> = Vec::new();
    let mut reqs = Vec::new();
    for grp in &groups {
        for s in 0..args.per_doc {
            reqs.push(GenerationRequest { prompt: grp.prompt.ids.clone(), seed: sample_seed(seed, round, &grp.key, s, "design") });
            rows.push(CandidateRow {
                candidate_id: candidate_id(seed, round, &grp.key, s),
                round: round as i64,
                doc_id: grp.doc_id.clone(),
                sample: s as i32,
                skill: grp.skill.clone(),
                setting: grp.setting.clone(),
                attempts: 1,
                prompt_ids: grp.prompt.ids.clone(),
                policy_version,
                temperature: args.model.temperature,
                ..Default::default()
            });
        }
    }
    let params = SamplingParams {
        temperature: args.model.temperature,
        top_p: args.top_p,
        top_k: args.top_k,
        max_new_tokens: args.max_new_tokens,
        stop: Vec::new(),
        stop_on_eos: true,
        max_batch: args.batch.max(1),
    };
    let pb = args.common.progress(Some(reqs.len() as u64), "designing");
    let gens = generate(&model, &reqs, &params, |n| pb.inc(n))?;
    pb.finish_and_clear();
    // Text the model last wrote, per row (for repair turns).
    let mut last_text: Vec<String> = Vec::with_capacity(rows.len());
    for (row, gen) in rows.iter_mut().zip(gens) {
        let p = parse_response(&gen.text);
        row.code = p.code.clone();
        row.final_code = p.code;
        row.hint = if args.hint == HintMode::Inline { p.hint } else { None };
        row.skill_tags = p.skill_tags;
        row.parse_error = p.error;
        row.response_ids = gen.tokens;
        row.response_logprobs = gen.logprobs;
        row.finish = finish_str(gen.finish).to_string();
        last_text.push(gen.text.clone());
        row.response_text = gen.text;
    }
    let parsed_first = rows.iter().filter(|r| r.code.is_some()).count();

    // Repair turns.
    let mut passed_checks = None;
    if args.repair > 0 {
        let sb = spade_sandbox::Sandbox::new(spade_sandbox::SandboxConfig { jobs: args.jobs.max(1), ..Default::default() })
            .context("starting the sandbox for --repair")?;
        let cfg = spade_sandbox::validate::CheckConfig { max_turns: args.max_turns, ..Default::default() };
        let mut done = vec![false; rows.len()];
        let row_group: Vec<usize> = (0..rows.len()).map(|i| i / args.per_doc).collect();
        for turn in 1..=args.repair + 1 {
            // Check every row not yet passed.
            let pbv = args.common.progress(Some(rows.len() as u64), "checking");
            let mut todo = Vec::new();
            for (i, row) in rows.iter().enumerate() {
                pbv.inc(1);
                if done[i] {
                    continue;
                }
                let (code, solver) = spade_sandbox::validate::split_solver_opt(row.final_code.as_deref());
                let setting = spade_sandbox::validate::Setting::parse(Some(&row.setting));
                let c = spade_sandbox::validate::Candidate { code, hint: row.hint.clone(), setting, solver };
                let v = spade_sandbox::validate::check(&sb, &c, &cfg);
                if v.passed() {
                    done[i] = true;
                } else {
                    let err = if row.final_code.is_none() {
                        ("parse".to_string(), format!("{} in your answer", row.parse_error.clone().unwrap_or_else(|| "no code".into())))
                    } else {
                        (v.stage.as_str().to_string(), v.error.clone())
                    };
                    todo.push((i, err));
                }
            }
            pbv.finish_and_clear();
            if turn > args.repair || todo.is_empty() {
                passed_checks = Some(done.iter().filter(|d| **d).count());
                break;
            }
            let mut rreqs = Vec::new();
            let mut ridx = Vec::new();
            for (i, (stage, error)) in todo {
                let grp = &groups[row_group[i]];
                let repair = prompt::repair_message(&templates, &grp.setting, &stage, &error, turn, args.hint)?;
                let shown = last_text[i].clone();
                let mut msgs: Vec<Message> = grp.prompt.messages.clone();
                msgs.push(Message::assistant(shown.clone()));
                msgs.push(repair.clone());
                let mut ids = model.encode_chat(&msgs, true)?;
                if ids.len() > budget {
                    // Keep the previous answer whole: re-fit the designer prompt to what is left.
                    let tail = model.encode_chat(&[Message::assistant(shown.clone()), repair.clone()], false)?.len();
                    let refit = (|| -> anyhow::Result<Vec<u32>> {
                        let doc = docs.get(row_group[i]);
                        let tie = format!("{seed}/{round}/{}", grp.key);
                        let document = if args.no_corpus { None } else { doc };
                        let spec = PromptSpec { setting: &grp.setting, hint_mode: args.hint, examples: args.examples, negatives: args.negatives };
                        let p =
                            prompt::group_prompt(&model, &templates, &spec, &memory, document, &grp.skill, &tie, budget.saturating_sub(tail + 8))?;
                        let mut m = p.messages;
                        m.push(Message::assistant(shown.clone()));
                        m.push(repair.clone());
                        Ok(model.encode_chat(&m, true)?)
                    })();
                    match refit {
                        Ok(v) if v.len() <= budget => ids = v,
                        _ => {
                            rows[i]
                                .repair_errors
                                .get_or_insert_with(Vec::new)
                                .push(format!("{stage}: {error} (repair prompt does not fit the context)"));
                            continue;
                        }
                    }
                }
                rows[i].repair_errors.get_or_insert_with(Vec::new).push(format!("{stage}: {error}"));
                rreqs.push(GenerationRequest {
                    prompt: ids,
                    seed: sample_seed(seed, round, &grp.key, rows[i].sample as usize, &format!("repair-{turn}")),
                });
                ridx.push(i);
            }
            if rreqs.is_empty() {
                passed_checks = Some(done.iter().filter(|d| **d).count());
                break;
            }
            let pb = args.common.progress(Some(rreqs.len() as u64), &format!("repair {turn}"));
            let gens = generate(&model, &rreqs, &params, |n| pb.inc(n))?;
            pb.finish_and_clear();
            for (i, gen) in ridx.into_iter().zip(gens) {
                let row = &mut rows[i];
                row.attempts += 1;
                let p = parse_response(&gen.text);
                if let Some(code) = p.code {
                    row.final_code = Some(code);
                    if args.hint == HintMode::Inline && p.hint.is_some() {
                        row.hint = p.hint;
                    }
                }
                last_text[i] = gen.text;
            }
        }
    }

    // --hint self: a second call writes the hint from the final code.
    if args.hint == HintMode::SelfCall {
        let hparams = SamplingParams { temperature: args.hint_temperature, max_new_tokens: args.hint_max_new_tokens, ..params.clone() };
        let hbudget = ctx.saturating_sub(args.hint_max_new_tokens);
        let mut hreqs = Vec::new();
        let mut hidx = Vec::new();
        for (i, row) in rows.iter_mut().enumerate() {
            let Some(code) = &row.final_code else { continue };
            let key = doc_key(row.doc_id.as_deref(), i / args.per_doc);
            match prompt::hint_prompt(&model, &templates, code, &row.skill, &row.setting, hbudget) {
                Ok(ids) => {
                    row.hint_prompt_ids = Some(ids.clone());
                    hreqs.push(GenerationRequest { prompt: ids, seed: sample_seed(seed, round, &key, row.sample as usize, "hint") });
                    hidx.push(i);
                }
                Err(e) => tracing::warn!("candidate {}: no hint: {e}", row.candidate_id),
            }
        }
        let pb = args.common.progress(Some(hreqs.len() as u64), "hints");
        let gens = generate(&model, &hreqs, &hparams, |n| pb.inc(n))?;
        pb.finish_and_clear();
        for (i, gen) in hidx.into_iter().zip(gens) {
            let row = &mut rows[i];
            row.hint = spade_design::parse::parse_hint(&gen.text);
            row.hint_response_ids = Some(gen.tokens);
            row.hint_response_logprobs = Some(gen.logprobs);
            row.hint_temperature = Some(args.hint_temperature);
        }
    }

    for row in rows.iter_mut() {
        row.env_id = row.final_code.as_deref().map(spade_sandbox::validate::env_id);
    }
    let batch = candidates_batch(&rows)?;
    let mut w = TableWriter::create(&args.output, batch.schema(), &meta)?;
    w.write(&batch)?;
    let n = w.finish().with_context(|| format!("writing {}", args.output))?;
    let parsed_final = rows.iter().filter(|r| r.final_code.is_some()).count();
    let tokens: usize = rows.iter().map(|r| r.response_ids.len()).sum();
    if model.server().is_none() {
        tracing::info!("{}", model.engine_stats());
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
