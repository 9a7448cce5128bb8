//! Scoring in the sandbox: `python/score.py` runs in sandbox children through
//! [`Sandbox::run_function`]. Reasoning-Gym and math items are scored in batches per task (one
//! child each, the packages imported once); a batch that fails (timeout, crash, memory) is
//! rescored one item per child so a hostile answer costs only its own row. HumanEval runs one
//! child per completion.
//!
//! The sandbox workers start with an empty environment, so the venv's site-packages are put on
//! their `PYTHONPATH` ([`SandboxConfig::python_path`]); the workers then allow those folders
//! read-only to their children (as every `sys.path` entry).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use spade_sandbox::{Limits, Sandbox, SandboxConfig};

use crate::python::SCORE;

/// What the sandbox made of one BFCL reply: its calls decoded and executed.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct StepOut {
    /// The decoded calls: `None` when the reply cannot be decoded, empty when it holds no call.
    pub calls: Option<Vec<String>>,
    /// One result per call.
    #[serde(default)]
    pub results: Vec<String>,
    /// Why decoding failed.
    #[serde(default)]
    pub error: Option<String>,
}

/// One answer to score.
#[derive(Clone, Debug, Serialize)]
pub struct ScoreReq {
    pub suite: String,
    pub task: String,
    pub response: String,
    pub answer: Option<String>,
    pub meta: Value,
}

/// The verifier's verdict.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ScoreOut {
    pub score: f64,
    /// `ok`, or why scoring failed (then the score is 0): a sandbox status (`timeout`, `memory`,
    /// `crashed`, …) or `scorer_error: …`.
    pub status: String,
    /// What the verifier extracted from the response (or the failure of a HumanEval test).
    #[serde(default)]
    pub extracted: Option<String>,
}

impl ScoreOut {
    /// Score 0 with `status` saying why nothing was scored.
    pub fn failed(status: impl Into<String>) -> Self {
        ScoreOut { score: 0.0, status: status.into(), extracted: None }
    }
}

#[derive(Clone, Debug)]
pub struct ScorerConfig {
    /// Concurrent sandbox children.
    pub jobs: usize,
    /// Items per batch (Reasoning-Gym, math).
    pub batch: usize,
    /// Time for one batch; one item alone gets the same.
    pub batch_timeout: Duration,
    /// Time for one HumanEval completion with its tests.
    pub code_timeout: Duration,
}

impl Default for ScorerConfig {
    fn default() -> Self {
        ScorerConfig { jobs: 2, batch: 32, batch_timeout: Duration::from_secs(120), code_timeout: Duration::from_secs(10) }
    }
}

pub struct Scorer {
    batch_sb: Sandbox,
    code_sb: Sandbox,
    site: Vec<String>,
    cfg: ScorerConfig,
}

impl Scorer {
    /// Start the sandbox workers with `site_paths` importable.
    pub fn new(site_paths: &[PathBuf], cfg: ScorerConfig) -> anyhow::Result<Scorer> {
        let site: Vec<String> = site_paths.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        let start = |load: Duration, call: Duration, memory: u64| -> anyhow::Result<Sandbox> {
            let limits =
                Limits { load_timeout: load, call_timeout: call, memory_bytes: memory, cpu_seconds: call.as_secs().max(1) + 30, ..Limits::default() };
            Sandbox::new(SandboxConfig { jobs: 1, limits, python_path: site_paths.to_vec(), ..SandboxConfig::default() })
                .context("starting the sandbox")
        };
        // run_function's deadline is load + call; score.py itself loads in milliseconds.
        let batch_sb = start(Duration::from_secs(30), cfg.batch_timeout, 4 << 30)?;
        let code_sb = start(Duration::from_secs(5), cfg.code_timeout, 2 << 30)?;
        Ok(Scorer { batch_sb, code_sb, site, cfg })
    }

    fn call(&self, sb: &Sandbox, reqs: &[&ScoreReq]) -> Result<Vec<ScoreOut>, String> {
        let v = sb.run_function(SCORE, "score_batch", &[json!(self.site), json!(reqs)], &json!({})).map_err(|e| {
            tracing::debug!("sandbox scoring: {}: {}", e.status.as_str(), first_line(&e.message));
            e.status.as_str().to_string()
        })?;
        let outs: Vec<ScoreOut> = serde_json::from_value(v).map_err(|e| format!("invalid_result: {e}"))?;
        if outs.len() != reqs.len() {
            return Err(format!("invalid_result: {} verdicts for {} answers", outs.len(), reqs.len()));
        }
        Ok(outs
            .into_iter()
            .map(|mut o| {
                if !o.score.is_finite() {
                    o.score = 0.0;
                }
                o.score = o.score.clamp(0.0, 1.0);
                o
            })
            .collect())
    }

    fn score_group(&self, reqs: &[&ScoreReq]) -> Vec<ScoreOut> {
        let code = reqs.first().is_some_and(|r| r.suite == "humaneval");
        let sb = if code { &self.code_sb } else { &self.batch_sb };
        match self.call(sb, reqs) {
            Ok(v) => v,
            Err(e) if reqs.len() == 1 => vec![ScoreOut::failed(e)],
            Err(e) => {
                tracing::warn!("scoring batch of {} failed ({e}); scoring one by one", reqs.len());
                reqs.iter().map(|r| self.call(sb, &[r]).map(|mut v| v.remove(0)).unwrap_or_else(ScoreOut::failed)).collect()
            }
        }
    }

    /// One step of a BFCL multi-turn episode, in a sandbox child: decode `reply` and execute its
    /// calls against the item's backends after replaying `executed` (see `bfcl_step` in
    /// `python/score.py`). `Err` is the sandbox's status (`timeout`, `memory`, …).
    pub fn bfcl_step(&self, meta: &Value, executed: &[Vec<String>], reply: &str) -> Result<StepOut, String> {
        let v = self
            .batch_sb
            .run_function(SCORE, "bfcl_step", &[json!(self.site), meta.clone(), json!(executed), json!(reply)], &json!({}))
            .map_err(|e| {
                tracing::debug!("sandbox bfcl step: {}: {}", e.status.as_str(), first_line(&e.message));
                e.status.as_str().to_string()
            })?;
        let out: StepOut = serde_json::from_value(v).map_err(|e| format!("invalid_result: {e}"))?;
        if out.calls.as_ref().is_some_and(|c| !c.is_empty() && c.len() != out.results.len()) {
            return Err("invalid_result: results do not match calls".into());
        }
        Ok(out)
    }

    /// [`Scorer::bfcl_step`] for many episodes at once (`--jobs` children); aligned with `steps`.
    pub fn bfcl_steps(&self, steps: &[(&Value, &[Vec<String>], &str)]) -> Vec<Result<StepOut, String>> {
        par_map(self.cfg.jobs, steps.len(), |i| {
            let (meta, executed, reply) = steps[i];
            self.bfcl_step(meta, executed, reply)
        })
    }

    /// Score every request; the result is aligned with `reqs`. `progress` is called with the
    /// number of answers just scored.
    pub fn score(&self, reqs: &[ScoreReq], progress: &(dyn Fn(usize) + Sync)) -> Vec<ScoreOut> {
        // Groups: one HumanEval answer each; others by (suite, task) in batches.
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut open: std::collections::HashMap<(String, String), usize> = Default::default();
        for (i, r) in reqs.iter().enumerate() {
            if r.suite == "humaneval" {
                groups.push(vec![i]);
                continue;
            }
            let key = (r.suite.clone(), r.task.clone());
            match open.get(&key) {
                Some(&g) if groups[g].len() < self.cfg.batch.max(1) => groups[g].push(i),
                _ => {
                    open.insert(key, groups.len());
                    groups.push(vec![i]);
                }
            }
        }
        let verdicts = par_map(self.cfg.jobs, groups.len(), |g| {
            let idx = &groups[g];
            let group: Vec<&ScoreReq> = idx.iter().map(|&i| &reqs[i]).collect();
            let res = self.score_group(&group);
            progress(idx.len());
            res
        });
        let mut out: Vec<Option<ScoreOut>> = vec![None; reqs.len()];
        for (idx, res) in groups.iter().zip(verdicts) {
            for (&i, r) in idx.iter().zip(res) {
                out[i] = Some(r);
            }
        }
        out.into_iter().map(|o| o.unwrap_or_else(|| ScoreOut::failed("infra_error: not scored"))).collect()
    }
}

/// `f(0..n)` on a pool of `jobs` threads, one index per task (each blocks on a sandbox child);
/// results in index order.
fn par_map<T: Send>(jobs: usize, n: usize, f: impl Fn(usize) -> T + Sync + Send) -> Vec<T> {
    match rayon::ThreadPoolBuilder::new().num_threads(jobs.max(1).min(n.max(1))).build() {
        Ok(pool) => pool.install(|| (0..n).into_par_iter().with_max_len(1).map(f).collect()),
        // No threads to be had: run them here, in order.
        Err(_) => (0..n).map(f).collect(),
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("").trim()
}
