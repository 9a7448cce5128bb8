//! The episode loop, batched across episodes.
//!
//! Live episodes are split into two fixed groups (by episode index). The loop takes the groups in
//! turn: it waits for the group's outstanding environment calls, handles their answers in a fixed
//! order, then samples the next reply of every episode of the group that awaits one in **one**
//! `generate` call and hands the actions to the environment threads. While one group's tokens are
//! sampled, the other group's environments step. Because every wait is for a fixed set of calls
//! and answers are handled in a fixed order, a run is reproducible: the same inputs and flags give
//! the same batches, hence the same episodes.
//!
//! An episode ends when the environment terminates or truncates it, after `max_turns` agent turns,
//! when the context is full (`max_tokens`), or when the environment fails (`env_error`, with the
//! sandbox status: exception, timeout, memory, crashed, output_too_large, invalid_result). An
//! infrastructure error (the host's fault) restarts the episode once from scratch; a second one is
//! recorded with status `infra_error`.

use std::collections::{BTreeMap, VecDeque};
use std::panic::AssertUnwindSafe;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{json, Value};
use spade_model::{FinishReason, GenerationRequest, Message};
use spade_sandbox::{CallError, CallResult, Episode, ResetOut, Sandbox, Status, StepOut};

use crate::action::extract_action;
use crate::policy::Policy;
use crate::pool::EnvSpec;
use crate::prompt::{Templates, TurnFormat};
use crate::seed::turn_seed;
use crate::Setting;
use crate::{Error, Result};

pub use spade_schema::Arm;
use spade_schema::RolloutRow;

/// One episode to play: environment (index into the pool), arm, index within (env, arm), seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpisodeSpec {
    pub env: usize,
    pub arm: Arm,
    pub episode: u32,
    /// Reset seed of the environment, and root of the agent's sampling seeds.
    pub seed: u64,
}

/// Limits and resources of a [`play`] call.
#[derive(Debug, Clone)]
pub struct PlayConfig {
    /// Agent turns per episode (also passed to the environment's constructor).
    pub max_turns: u32,
    /// Tokens sampled per turn at most.
    pub max_new_tokens: usize,
    /// Episodes live at once.
    pub concurrency: usize,
    /// Threads making environment calls.
    pub env_threads: usize,
    pub templates: Templates,
}

impl Default for PlayConfig {
    fn default() -> Self {
        PlayConfig { max_turns: 8, max_new_tokens: 256, concurrency: 256, env_threads: 8, templates: Templates::default() }
    }
}

/// A played episode.
#[derive(Debug, Clone, PartialEq)]
pub struct EpisodeOutcome {
    pub spec: EpisodeSpec,
    pub env_id: String,
    /// Rewards summed, clipped to [0, 1].
    pub ret: f64,
    pub raw_return: f64,
    pub success: bool,
    pub turns: u32,
    /// `ok` or the sandbox status of the failing call.
    pub status: Status,
    /// terminated, truncated, max_turns, max_tokens or env_error.
    pub termination: String,
    pub token_ids: Vec<u32>,
    pub loss_mask: Vec<u8>,
    pub logprobs: Vec<f32>,
    /// `{"messages": [...], "actions": [...], "rewards": [...], "final_observation", "error"}`.
    pub transcript: Value,
    /// Tokens the agent sampled (mask 1).
    pub generated_tokens: usize,
    /// Times the episode was started (2 after an infrastructure error).
    pub attempts: u32,
}

/// The episodes of a rollout: `group` per environment of `pool` and arm, each with its seed from
/// (run seed, round, step, env_id, arm, episode).
pub fn episode_specs(pool: &[EnvSpec], arms: &[Arm], group: u32, seed: u64, round: u64, step: u64) -> Vec<EpisodeSpec> {
    let mut specs = Vec::new();
    for (i, e) in pool.iter().enumerate() {
        for &arm in arms {
            for k in 0..group {
                specs.push(EpisodeSpec { env: i, arm, episode: k, seed: crate::seed::episode_seed(seed, round, step, &e.env_id, arm.as_str(), k) });
            }
        }
    }
    specs
}

/// Per arm, the ok episodes and their mean return; and the count of each status.
pub fn outcome_summary(outcomes: &[EpisodeOutcome], arms: &[Arm]) -> serde_json::Value {
    let mut per_arm = serde_json::Map::new();
    for &arm in arms {
        let ok: Vec<&EpisodeOutcome> = outcomes.iter().filter(|o| o.spec.arm == arm && o.status == Status::Ok).collect();
        let mean = if ok.is_empty() { None } else { Some(ok.iter().map(|o| o.ret).sum::<f64>() / ok.len() as f64) };
        per_arm.insert(arm.as_str().into(), serde_json::json!({"ok": ok.len(), "mean_return": mean}));
    }
    let mut statuses = std::collections::BTreeMap::<String, usize>::new();
    for o in outcomes {
        *statuses.entry(o.status.to_string()).or_default() += 1;
    }
    serde_json::json!({"arms": per_arm, "statuses": statuses})
}

/// What every row of one rollout run carries: the weights, round, step and temperature that
/// played it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stamp {
    pub policy_version: i64,
    pub round: i64,
    pub step: i32,
    pub temperature: f32,
}

impl EpisodeOutcome {
    /// The episode as a `rollouts` row, with its environment's skill and the run's stamp.
    pub fn row(&self, skill: Option<String>, stamp: &Stamp) -> RolloutRow {
        RolloutRow {
            env_id: self.env_id.clone(),
            arm: self.spec.arm,
            episode: self.spec.episode as i32,
            seed: self.spec.seed as i64,
            r#return: self.ret,
            raw_return: self.raw_return,
            success: self.success,
            turns: self.turns as i32,
            status: self.status,
            termination: self.termination.clone(),
            token_ids: self.token_ids.clone(),
            loss_mask: self.loss_mask.clone(),
            logprobs: self.logprobs.clone(),
            transcript: self.transcript.to_string(),
            skill,
            policy_version: stamp.policy_version,
            round: stamp.round,
            step: stamp.step,
            temperature: stamp.temperature,
        }
    }
}

/// Throughput of a [`play`] call.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct PlayStats {
    pub episodes: usize,
    pub generate_calls: usize,
    /// Sequences continued, over all calls (mean batch = this / calls).
    pub sequences: usize,
    pub generated_tokens: usize,
    pub generate_secs: f64,
    pub wall_secs: f64,
    pub infra_retries: usize,
}

enum Job {
    Open { slot: u64, code: Arc<str>, max_turns: u32, seed: u64 },
    Step { slot: u64, ep: Episode, action: String },
    Close { ep: Episode },
}

enum Done {
    Opened {
        slot: u64,
        r: CallResult<(Episode, ResetOut)>,
    },
    Stepped {
        slot: u64,
        ep: Episode,
        r: CallResult<StepOut>,
    },
    /// The call panicked (a bug in this process, not the environment's fault).
    Lost {
        slot: u64,
        message: String,
    },
}

impl Done {
    fn slot(&self) -> u64 {
        match self {
            Done::Opened { slot, .. } | Done::Stepped { slot, .. } | Done::Lost { slot, .. } => *slot,
        }
    }
}

/// The first prompt of an episode, as the agent is shown it.
pub struct FirstPrompt {
    /// The rendered chat's tokens, up to the generation prompt.
    pub tokens: Vec<u32>,
    /// System and user message as written (before the environment's text is marked as data).
    pub messages: [Message; 2],
    /// The tools went to the chat template's own tool format.
    pub native_tools: bool,
}

/// The system prompt, then the first observation (`hint` appended in the hint arm); a tool
/// environment's tools go in the chat template's own tool format when it has one (and its tool
/// results then in tool turns), otherwise they are listed in the first observation. What the
/// environment wrote is data: no special token in it is real.
pub fn first_prompt(
    policy: &dyn Policy,
    templates: &Templates,
    format: &TurnFormat,
    setting: Setting,
    reset: &ResetOut,
    hint: Option<&str>,
) -> Result<FirstPrompt> {
    let system = templates.system(setting)?;
    let native = format
        .tool
        .as_ref()
        .and(reset.info.get("tools"))
        .and_then(|t| t.as_array())
        .map(|t| Value::Array(t.iter().map(|f| json!({"type": "function", "function": f})).collect()));
    let listed = if native.is_some() { Value::Null } else { reset.info.clone() };
    let first = templates.first_observation(setting, &reset.observation, &listed, hint)?;
    let messages = [Message::system(system), Message::user(first)];
    let shown = [messages[0].clone(), Message::user(policy.hide(&messages[1].content))];
    let tools = native.as_ref().map(|t| hide_strings(t, &|s| policy.hide(s)));
    let text = policy.chat_template().render_with_tools(&shown, tools.as_ref(), true).map_err(|e| Error::Chat(e.to_string()))?;
    Ok(FirstPrompt { tokens: policy.encode(&text)?, messages, native_tools: native.is_some() })
}

/// `v` with `f` applied to every string in it (keys stay).
fn hide_strings(v: &Value, f: &dyn Fn(&str) -> String) -> Value {
    match v {
        Value::String(s) => Value::String(f(s)),
        Value::Array(a) => Value::Array(a.iter().map(|x| hide_strings(x, f)).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), hide_strings(x, f))).collect()),
        other => other.clone(),
    }
}

fn env_worker(sb: &Sandbox, jobs: &Mutex<mpsc::Receiver<Job>>, done: &mpsc::Sender<Done>) {
    loop {
        let job = match jobs.lock().unwrap_or_else(|e| e.into_inner()).recv() {
            Ok(j) => j,
            Err(_) => return,
        };
        let (slot, out) = match job {
            Job::Close { mut ep } => {
                ep.close();
                continue;
            }
            Job::Open { slot, code, max_turns, seed } => {
                let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    let (mut ep, _) = sb.open_env(&code, Some(max_turns))?;
                    let reset = ep.reset(seed)?;
                    Ok((ep, reset))
                }));
                (slot, r.map(|r| Done::Opened { slot, r }))
            }
            Job::Step { slot, mut ep, action } => {
                let r = std::panic::catch_unwind(AssertUnwindSafe(move || {
                    let r = ep.step(&action);
                    Done::Stepped { slot, ep, r }
                }));
                (slot, r)
            }
        };
        let d = out.unwrap_or_else(|p| Done::Lost {
            slot,
            message: p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default(),
        });
        if done.send(d).is_err() {
            return;
        }
    }
}

struct Live {
    spec: usize,
    attempt: u32,
    group: usize,
    tokens: Vec<u32>,
    mask: Vec<u8>,
    logprobs: Vec<f32>,
    messages: Vec<Value>,
    actions: Vec<String>,
    rewards: Vec<f64>,
    turns: u32,
    ep: Option<Episode>,
    info: Value,
    generated: usize,
    /// Decoded end-of-turn token of the last reply, when it ended with one.
    eos_text: Option<String>,
    awaiting: bool,
    /// The tools went to the chat template's own tool format (tool results in tool turns).
    native_tools: bool,
}

struct Ended {
    status: Status,
    termination: &'static str,
    final_observation: Option<String>,
    error: Option<String>,
}

const GROUPS: usize = 2;

/// Play every episode of `specs` (environments indexed into `envs`) with `policy`, environments
/// in `sandbox`. `on_done` sees each episode as it ends. Outcomes come back in the order of
/// `specs`. Environment failures are recorded on their episodes; an error here is the model's
/// or the chat template's.
pub fn play(
    envs: &[EnvSpec],
    specs: &[EpisodeSpec],
    policy: &dyn Policy,
    sandbox: &Sandbox,
    cfg: &PlayConfig,
    on_done: &mut dyn FnMut(&EpisodeOutcome),
) -> Result<(Vec<EpisodeOutcome>, PlayStats)> {
    let start = Instant::now();
    if let Some(s) = specs.iter().find(|s| s.env >= envs.len()) {
        return Err(Error::Invalid(format!("episode names environment {} of {}", s.env, envs.len())));
    }
    let format = TurnFormat::learn(policy.chat_template())?;
    let ctx = policy.context_length();
    let codes: Vec<Arc<str>> = envs.iter().map(|e| Arc::from(e.code.as_str())).collect();
    let mut stats = PlayStats::default();
    let mut outcomes: Vec<Option<EpisodeOutcome>> = vec![None; specs.len()];

    let (job_tx, job_rx) = mpsc::channel::<Job>();
    let (done_tx, done_rx) = mpsc::channel::<Done>();
    let job_rx = Mutex::new(job_rx);
    std::thread::scope(|scope| -> Result<()> {
        for _ in 0..cfg.env_threads.max(1) {
            let (jr, dt) = (&job_rx, done_tx.clone());
            scope.spawn(move || env_worker(sandbox, jr, &dt));
        }
        drop(done_tx);
        let job_tx = job_tx; // dropped when this closure returns: the workers then exit
        let send = |j: Job| job_tx.send(j).map_err(|_| Error::Invalid("environment threads stopped".into()));

        let mut pending: VecDeque<(usize, u32)> = (0..specs.len()).map(|i| (i, 0)).collect();
        let mut live: BTreeMap<u64, Live> = BTreeMap::new();
        let mut inflight = [0usize; GROUPS];
        let mut arrived: BTreeMap<u64, Done> = BTreeMap::new();
        let mut next_slot = 0u64;
        let mut g = 0usize;

        // Ends an episode: builds its outcome, closes its environment.
        let mut finish = |mut l: Live, end: Ended, outcomes: &mut Vec<Option<EpisodeOutcome>>| -> Result<()> {
            if let Some(ep) = l.ep.take() {
                send(Job::Close { ep })?;
            }
            let spec = specs[l.spec];
            let raw: f64 = l.rewards.iter().sum();
            let ret = if raw.is_finite() { raw.clamp(0.0, 1.0) } else { 0.0 };
            let ok = end.status == Status::Ok;
            let success = ok && l.info.get("success").and_then(Value::as_bool).unwrap_or(ret >= 0.5);
            let o = EpisodeOutcome {
                spec,
                env_id: envs[spec.env].env_id.clone(),
                ret,
                raw_return: raw,
                success,
                turns: l.turns,
                status: end.status,
                termination: end.termination.to_string(),
                transcript: json!({
                    "messages": l.messages,
                    "actions": l.actions,
                    "rewards": l.rewards,
                    "final_observation": end.final_observation,
                    "error": end.error,
                }),
                token_ids: l.tokens,
                loss_mask: l.mask,
                logprobs: l.logprobs,
                generated_tokens: l.generated,
                attempts: l.attempt + 1,
            };
            on_done(&o);
            outcomes[l.spec] = Some(o);
            Ok(())
        };
        let env_error = |e: &CallError| Ended { status: e.status, termination: "env_error", final_observation: None, error: Some(e.to_string()) };

        loop {
            // Start episodes while there is room.
            while live.len() < cfg.concurrency.max(1) {
                let Some((i, attempt)) = pending.pop_front() else { break };
                let spec = specs[i];
                let slot = next_slot;
                next_slot += 1;
                let group = i % GROUPS;
                live.insert(
                    slot,
                    Live {
                        spec: i,
                        attempt,
                        group,
                        tokens: Vec::new(),
                        mask: Vec::new(),
                        logprobs: Vec::new(),
                        messages: Vec::new(),
                        actions: Vec::new(),
                        rewards: Vec::new(),
                        turns: 0,
                        ep: None,
                        info: Value::Null,
                        generated: 0,
                        eos_text: None,
                        awaiting: false,
                        native_tools: false,
                    },
                );
                inflight[group] += 1;
                send(Job::Open { slot, code: codes[spec.env].clone(), max_turns: cfg.max_turns, seed: spec.seed })?;
            }
            if live.is_empty() && pending.is_empty() {
                break;
            }

            // Wait for this group's outstanding calls.
            while inflight[g] > 0 {
                let d = done_rx.recv().map_err(|_| Error::Invalid("environment threads stopped".into()))?;
                let grp = live.get(&d.slot()).map(|l| l.group).expect("answer for a live episode");
                inflight[grp] -= 1;
                arrived.insert(d.slot(), d);
            }
            let mine: Vec<u64> = arrived.keys().copied().filter(|s| live[s].group == g).collect();
            for slot in mine {
                let d = arrived.remove(&slot).expect("arrived");
                let mut l = live.remove(&slot).expect("live");
                let spec = specs[l.spec];
                let env = &envs[spec.env];
                let failure: Option<(Live, CallError)> = match d {
                    Done::Lost { message, .. } => Some((
                        l,
                        CallError {
                            status: Status::InfraError,
                            message: format!("environment call panicked: {message}"),
                            traceback: None,
                            phase: None,
                        },
                    )),
                    Done::Opened { r: Err(e), .. } => Some((l, e)),
                    Done::Stepped { ep, r: Err(e), .. } => {
                        l.ep = Some(ep);
                        Some((l, e))
                    }
                    Done::Opened { r: Ok((ep, reset)), .. } => {
                        l.ep = Some(ep);
                        let hint = if spec.arm == Arm::Hint { env.hint.as_deref() } else { None };
                        let first = first_prompt(policy, &cfg.templates, &format, env.setting, &reset, hint)?;
                        l.native_tools = first.native_tools;
                        l.info = reset.info;
                        l.tokens = first.tokens;
                        let msgs = first.messages;
                        l.mask = vec![0; l.tokens.len()];
                        l.logprobs = vec![0.0; l.tokens.len()];
                        l.messages = msgs.iter().map(|m| json!({"role": m.role, "content": m.content})).collect();
                        if l.tokens.len() >= ctx {
                            let end = Ended { status: Status::Ok, termination: "max_tokens", final_observation: None, error: None };
                            finish(l, end, &mut outcomes)?;
                        } else {
                            l.awaiting = true;
                            live.insert(slot, l);
                        }
                        None
                    }
                    Done::Stepped { ep, r: Ok(out), .. } => {
                        l.ep = Some(ep);
                        l.rewards.push(out.reward);
                        // A tool's result (the driver marks it) goes back as a tool turn in native format.
                        let as_tool = l.native_tools && out.info.get("tool").is_some();
                        l.info = out.info;
                        let termination = if out.terminated {
                            Some("terminated")
                        } else if out.truncated {
                            Some("truncated")
                        } else if l.turns >= cfg.max_turns {
                            Some("max_turns")
                        } else {
                            None
                        };
                        let seg = match termination {
                            Some(_) => None,
                            None => {
                                let observation = policy.hide(&out.observation);
                                let text = if as_tool {
                                    format.tool_segment(l.eos_text.as_deref(), &observation)
                                } else {
                                    format.observation_segment(l.eos_text.as_deref(), &observation)
                                };
                                Some(policy.encode(&text)?)
                            }
                        };
                        match (termination, seg) {
                            (None, Some(seg)) if l.tokens.len() + seg.len() < ctx => {
                                l.tokens.extend_from_slice(&seg);
                                l.mask.resize(l.tokens.len(), 0);
                                l.logprobs.resize(l.tokens.len(), 0.0);
                                l.messages.push(json!({"role": if as_tool { "tool" } else { "user" }, "content": out.observation}));
                                l.awaiting = true;
                                live.insert(slot, l);
                            }
                            (t, _) => {
                                let end = Ended {
                                    status: Status::Ok,
                                    termination: t.unwrap_or("max_tokens"),
                                    final_observation: Some(out.observation),
                                    error: None,
                                };
                                finish(l, end, &mut outcomes)?;
                            }
                        }
                        None
                    }
                };
                if let Some((mut l, e)) = failure {
                    if e.status == Status::InfraError && l.attempt == 0 {
                        tracing::warn!(env_id = %env.env_id, "infrastructure error ({e}); restarting the episode once");
                        stats.infra_retries += 1;
                        if let Some(ep) = l.ep.take() {
                            send(Job::Close { ep })?;
                        }
                        pending.push_back((l.spec, 1));
                    } else {
                        finish(l, env_error(&e), &mut outcomes)?;
                    }
                }
            }

            // One generate call for every episode of the group awaiting a reply.
            let batch: Vec<u64> = live.iter().filter(|(_, l)| l.group == g && l.awaiting).map(|(s, _)| *s).collect();
            if !batch.is_empty() {
                let reqs: Vec<GenerationRequest> = batch
                    .iter()
                    .map(|s| {
                        let l = &live[s];
                        GenerationRequest { prompt: l.tokens.clone(), seed: turn_seed(specs[l.spec].seed, l.turns) }
                    })
                    .collect();
                let t = Instant::now();
                let gens = policy.generate(&reqs, cfg.max_new_tokens)?;
                stats.generate_secs += t.elapsed().as_secs_f64();
                stats.generate_calls += 1;
                stats.sequences += reqs.len();
                if gens.len() != reqs.len() {
                    return Err(Error::Invalid(format!("generate returned {} sequences for {}", gens.len(), reqs.len())));
                }
                for (slot, gen) in batch.into_iter().zip(gens) {
                    let mut l = live.remove(&slot).expect("live");
                    l.awaiting = false;
                    if gen.logprobs.len() != gen.tokens.len() {
                        return Err(Error::Invalid("generate returned log-probs not aligned with tokens".into()));
                    }
                    stats.generated_tokens += gen.tokens.len();
                    l.generated += gen.tokens.len();
                    l.tokens.extend_from_slice(&gen.tokens);
                    l.mask.resize(l.tokens.len(), 1);
                    l.logprobs.extend_from_slice(&gen.logprobs);
                    l.turns += 1;
                    l.eos_text = match (gen.finish, gen.tokens.last()) {
                        (FinishReason::Eos, Some(&t)) => Some(policy.decode(&[t])?),
                        _ => None,
                    };
                    l.messages.push(json!({"role": "assistant", "content": gen.text}));
                    if gen.finish == FinishReason::Length && l.tokens.len() >= ctx {
                        // The reply was cut by the context: nothing more can follow it.
                        let end = Ended { status: Status::Ok, termination: "max_tokens", final_observation: None, error: None };
                        finish(l, end, &mut outcomes)?;
                        continue;
                    }
                    let action = extract_action(envs[specs[l.spec].env].setting, &gen.text);
                    l.actions.push(action.clone());
                    let ep = l.ep.take().expect("a live episode holds its environment");
                    inflight[l.group] += 1;
                    live.insert(slot, l);
                    send(Job::Step { slot, ep, action })?;
                }
            }
            g = (g + 1) % GROUPS;
        }
        Ok(())
    })?;

    let outcomes: Vec<EpisodeOutcome> = outcomes.into_iter().map(|o| o.expect("every episode ends")).collect();
    stats.episodes = outcomes.len();
    stats.wall_secs = start.elapsed().as_secs_f64();
    Ok((outcomes, stats))
}
