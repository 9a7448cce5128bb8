//! One `spade-design` call as an algorithm: a prompt per document (its setting and skill chosen by
//! the round), `per_doc` samples each, then with `repair` the check → repair-message → regenerate
//! loop over the samples that fail the sandbox checks, then with `--hint self` a second call that
//! writes each hint from the final code. The stage reads the inputs and writes the rows.

use indicatif::ProgressBar;
use spade_model::{FinishReason, Generation, GenerationRequest, Generator, Message, SamplingParams};
use spade_sandbox::validate::{self, Candidate, CheckConfig};
use spade_sandbox::{Sandbox, SandboxConfig};
use spade_schema::{MemoryRow, Setting};

use crate::parse::{parse_hint, parse_response};
use crate::prompt::{self, Document, HintMode, Prompt, PromptSpec, Templates};
use crate::rows::{candidate_id, doc_key, sample_seed, CandidateRow};
use crate::{Error, Result};

/// The settings of one design call.
#[derive(Debug, Clone)]
pub struct DesignConfig {
    pub seed: u64,
    pub round: u64,
    /// Samples per prompt.
    pub per_doc: usize,
    /// Prompts when there are no documents (`--no-corpus`).
    pub groups: usize,
    /// Leave the documents out of the prompts.
    pub no_corpus: bool,
    /// The cycle of settings the prompts take in turn ([`crate::parse_settings`]).
    pub settings: Vec<Setting>,
    /// Skills for every setting; `None`: each setting's own six.
    pub skills: Option<Vec<String>>,
    pub skills_per_round: usize,
    pub hint: HintMode,
    pub examples: usize,
    pub negatives: usize,
    pub params: SamplingParams,
    /// Repair turns for samples that fail the checks (0: none).
    pub repair: usize,
    /// Sandbox workers of the repair checks.
    pub jobs: usize,
    /// Turn limit of the repair checks' episodes.
    pub max_turns: u32,
    pub hint_temperature: f32,
    pub hint_max_new_tokens: usize,
    /// Checkpoint step of the weights, stamped into every row.
    pub policy_version: i64,
}

/// One prompt group: a document (or none), its setting and skill, and the prompt.
#[derive(Debug, Clone)]
pub struct Group {
    pub doc_id: Option<String>,
    pub key: String,
    pub skill: String,
    pub setting: Setting,
    pub prompt: Prompt,
}

/// What a design call produced.
#[derive(Debug, Clone)]
pub struct Designed {
    /// Every sample, in (prompt, sample) order; `env_id` set from the final code.
    pub rows: Vec<CandidateRow>,
    pub groups: Vec<Group>,
    /// Samples whose first response parsed.
    pub parsed_first: usize,
    /// With repair: samples that passed the checks at the end.
    pub passed_checks: Option<usize>,
}

/// The label of a response's end in the `finish` column.
pub fn finish_str(f: FinishReason) -> &'static str {
    match f {
        FinishReason::Eos => "eos",
        FinishReason::Stop => "stop",
        FinishReason::Length => "length",
    }
}

fn spec(cfg: &DesignConfig, setting: Setting) -> PromptSpec {
    PromptSpec { setting, hint_mode: cfg.hint, examples: cfg.examples, negatives: cfg.negatives }
}

fn generate(generator: &dyn Generator, reqs: &[GenerationRequest], params: &SamplingParams, pb: ProgressBar) -> Result<Vec<Generation>> {
    let out = generator.generate_with_progress(reqs, params, &mut |n| pb.inc(n as u64))?;
    pb.finish_and_clear();
    Ok(out)
}

/// Runs one design call (see the module doc). `bar(len, label)` gives the progress bar of each
/// phase. The prompt budget is the model's context less `params.max_new_tokens`.
pub fn design(
    generator: &dyn Generator,
    templates: &Templates,
    memory: &[MemoryRow],
    docs: &[Document],
    cfg: &DesignConfig,
    bar: &dyn Fn(u64, &str) -> ProgressBar,
) -> Result<Designed> {
    let model = generator.model();
    let ctx = model.context_length();
    if cfg.params.max_new_tokens + 16 > ctx {
        return Err(Error::Invalid(format!(
            "--max-new-tokens {} leaves no room for the prompt in the model's context of {ctx} tokens",
            cfg.params.max_new_tokens
        )));
    }
    let budget = ctx - cfg.params.max_new_tokens;
    let (seed, round) = (cfg.seed, cfg.round);
    let n_groups = if cfg.no_corpus && docs.is_empty() { cfg.groups } else { docs.len() };
    let skills_of = |setting: Setting| -> Vec<String> {
        match &cfg.skills {
            Some(k) => k.iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect(),
            None => crate::default_skills(setting).iter().map(|s| s.to_string()).collect(),
        }
    };
    let document = |i: usize| if cfg.no_corpus { None } else { docs.get(i) };

    // Prompts, one per group.
    let mut groups = Vec::with_capacity(n_groups);
    for i in 0..n_groups {
        let setting = crate::setting_for(&cfg.settings, round, i);
        let skill = crate::skill_for(&skills_of(setting), cfg.skills_per_round, round, i).to_string();
        let doc_id = docs.get(i).map(|d| d.doc_id.clone());
        let key = doc_key(doc_id.as_deref(), i);
        let tie = format!("{seed}/{round}/{key}");
        let prompt = prompt::group_prompt(model, templates, &spec(cfg, setting), memory, document(i), &skill, &tie, budget)
            .map_err(|e| Error::Invalid(format!("designer prompt for document {}: {e}", doc_id.as_deref().unwrap_or("(none)"))))?;
        let doc_id = if cfg.no_corpus { None } else { doc_id };
        groups.push(Group { doc_id, key, skill, setting, prompt });
    }
    let mut rows: Vec<CandidateRow> = Vec::new();
    let mut reqs = Vec::new();
    for grp in &groups {
        for s in 0..cfg.per_doc {
            reqs.push(GenerationRequest { prompt: grp.prompt.ids.clone(), seed: sample_seed(seed, round, &grp.key, s, "design") });
            rows.push(CandidateRow {
                candidate_id: candidate_id(seed, round, &grp.key, s),
                round: round as i64,
                doc_id: grp.doc_id.clone(),
                sample: s as i32,
                skill: grp.skill.clone(),
                setting: grp.setting,
                attempts: 1,
                prompt_ids: grp.prompt.ids.clone(),
                policy_version: cfg.policy_version,
                temperature: cfg.params.temperature,
                ..Default::default()
            });
        }
    }
    let gens = generate(generator, &reqs, &cfg.params, bar(reqs.len() as u64, "designing"))?;
    // Text the model last wrote, per row (for repair turns).
    let mut last_text: Vec<String> = Vec::with_capacity(rows.len());
    for (row, gen) in rows.iter_mut().zip(gens) {
        let p = parse_response(&gen.text);
        row.code = p.code.clone();
        row.final_code = p.code;
        row.hint = if cfg.hint == HintMode::Inline { p.hint } else { None };
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
    if cfg.repair > 0 {
        let sb = Sandbox::new(SandboxConfig { jobs: cfg.jobs.max(1), ..Default::default() })
            .map_err(|e| Error::Invalid(format!("starting the sandbox for --repair: {e}")))?;
        let check = CheckConfig { max_turns: cfg.max_turns, ..Default::default() };
        let mut done = vec![false; rows.len()];
        let row_group: Vec<usize> = (0..rows.len()).map(|i| i / cfg.per_doc).collect();
        for turn in 1..=cfg.repair + 1 {
            // Check every row not yet passed.
            let pbv = bar(rows.len() as u64, "checking");
            let mut todo = Vec::new();
            for (i, row) in rows.iter().enumerate() {
                pbv.inc(1);
                if done[i] {
                    continue;
                }
                let (code, solver) = validate::split_solver_opt(row.final_code.as_deref());
                let v = validate::check(&sb, &Candidate { code, hint: row.hint.clone(), setting: row.setting, solver }, &check);
                if v.passed() {
                    done[i] = true;
                } else if row.final_code.is_none() {
                    todo.push((i, "parse".to_string(), format!("{} in your answer", row.parse_error.clone().unwrap_or_else(|| "no code".into()))));
                } else {
                    todo.push((i, v.stage.as_str().to_string(), v.error.clone()));
                }
            }
            pbv.finish_and_clear();
            if turn > cfg.repair || todo.is_empty() {
                passed_checks = Some(done.iter().filter(|d| **d).count());
                break;
            }
            let mut rreqs = Vec::new();
            let mut ridx = Vec::new();
            for (i, stage, error) in todo {
                let grp = &groups[row_group[i]];
                let repair = prompt::repair_message(templates, grp.setting, &stage, &error, turn, cfg.hint)?;
                let shown = Message::assistant(last_text[i].clone());
                let mut msgs: Vec<Message> = grp.prompt.messages.clone();
                msgs.extend([shown.clone(), repair.clone()]);
                let mut ids = model.encode_chat(&msgs, true)?;
                if ids.len() > budget {
                    // Keep the previous answer whole: re-fit the designer prompt to what is left.
                    let tail = model.encode_chat(&[shown.clone(), repair.clone()], false)?.len();
                    let tie = format!("{seed}/{round}/{}", grp.key);
                    let refit = (|| -> Result<Vec<u32>> {
                        let p = prompt::group_prompt(
                            model,
                            templates,
                            &spec(cfg, grp.setting),
                            memory,
                            document(row_group[i]),
                            &grp.skill,
                            &tie,
                            budget.saturating_sub(tail + 8),
                        )?;
                        let mut m = p.messages;
                        m.extend([shown.clone(), repair.clone()]);
                        Ok(model.encode_chat(&m, true)?)
                    })();
                    match refit {
                        Ok(v) if v.len() <= budget => ids = v,
                        _ => {
                            let errors = rows[i].repair_errors.get_or_insert_with(Vec::new);
                            errors.push(format!("{stage}: {error} (repair prompt does not fit the context)"));
                            continue;
                        }
                    }
                }
                rows[i].repair_errors.get_or_insert_with(Vec::new).push(format!("{stage}: {error}"));
                let seed = sample_seed(seed, round, &grp.key, rows[i].sample as usize, &format!("repair-{turn}"));
                rreqs.push(GenerationRequest { prompt: ids, seed });
                ridx.push(i);
            }
            if rreqs.is_empty() {
                passed_checks = Some(done.iter().filter(|d| **d).count());
                break;
            }
            let gens = generate(generator, &rreqs, &cfg.params, bar(rreqs.len() as u64, &format!("repair {turn}")))?;
            for (i, gen) in ridx.into_iter().zip(gens) {
                let row = &mut rows[i];
                row.attempts += 1;
                let p = parse_response(&gen.text);
                if let Some(code) = p.code {
                    row.final_code = Some(code);
                    if cfg.hint == HintMode::Inline && p.hint.is_some() {
                        row.hint = p.hint;
                    }
                }
                last_text[i] = gen.text;
            }
        }
    }

    // --hint self: a second call writes the hint from the final code.
    if cfg.hint == HintMode::SelfCall {
        let hparams = SamplingParams { temperature: cfg.hint_temperature, max_new_tokens: cfg.hint_max_new_tokens, ..cfg.params.clone() };
        let hbudget = ctx.saturating_sub(cfg.hint_max_new_tokens);
        let mut hreqs = Vec::new();
        let mut hidx = Vec::new();
        for (i, row) in rows.iter_mut().enumerate() {
            let Some(code) = &row.final_code else { continue };
            let key = doc_key(row.doc_id.as_deref(), i / cfg.per_doc);
            match prompt::hint_prompt(model, templates, code, &row.skill, row.setting, hbudget) {
                Ok(ids) => {
                    row.hint_prompt_ids = Some(ids.clone());
                    hreqs.push(GenerationRequest { prompt: ids, seed: sample_seed(seed, round, &key, row.sample as usize, "hint") });
                    hidx.push(i);
                }
                Err(e) => tracing::warn!("candidate {}: no hint: {e}", row.candidate_id),
            }
        }
        let gens = generate(generator, &hreqs, &hparams, bar(hreqs.len() as u64, "hints"))?;
        for (i, gen) in hidx.into_iter().zip(gens) {
            let row = &mut rows[i];
            row.hint = parse_hint(&gen.text);
            row.hint_response_ids = Some(gen.tokens);
            row.hint_response_logprobs = Some(gen.logprobs);
            row.hint_temperature = Some(cfg.hint_temperature);
        }
    }

    for row in rows.iter_mut() {
        row.env_id = row.final_code.as_deref().map(validate::env_id);
    }
    Ok(Designed { rows, groups, parsed_first, passed_checks })
}
