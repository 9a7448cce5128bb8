//! BFCL v4 multi-turn episodes, played the way the package plays models without native function
//! calling (its `inference_multi_turn_prompting`): the item's first turn (the package's system
//! prompt with the function docs, then the user's message) goes to the model; a reply that
//! decodes to calls is executed against the package's function backends and each call's result
//! comes back as a `tool` message; a reply with no call (or one that cannot be decoded) ends the
//! turn, and the next turn's user message follows. More than `max_steps` executed steps in one
//! turn force the episode to quit (the package's `MAXIMUM_STEP_LIMIT`, 20).
//!
//! The model's calls are untrusted (the backends `eval()` them), so decoding and execution run in
//! the sandbox ([`crate::Scorer::bfcl_step`]); this module only keeps the episode's state. The
//! transcript (a JSON list of turns, each a list of steps `{"reply", "calls", "results",
//! "error"}`) is the row's `response`, and BFCL's multi-turn checker scores it. [`play`] plays
//! every episode of a run, batching the replies across episodes.

use serde_json::{json, Value};
use spade_model::{GenerationRequest, Generator};

use crate::answer::{Answer, Bar, Sampling};
pub use crate::score::StepOut;
use crate::{Item, Message, ScoreOut, Scorer};

/// BFCL's step limit per turn (`MAXIMUM_STEP_LIMIT` in `bfcl_eval.constants.default_prompts`).
pub const MAX_STEPS: usize = 20;

/// How an episode ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// Every turn played.
    Done,
    /// More than the step limit in one turn: the package force-quits (the item then fails
    /// unless it was the last turn, as in BFCL).
    StepLimit,
    /// It could not go on (the prompt outgrew the context, the sandbox failed): no score.
    Failed(String),
}

/// One episode in progress.
#[derive(Clone, Debug)]
pub struct Episode {
    /// Index of the item.
    pub item: usize,
    pub sample: i32,
    messages: Vec<Message>,
    /// User messages of the turns after the first.
    later_turns: Vec<Vec<Message>>,
    turn: usize,
    steps_in_turn: usize,
    generations: u64,
    turns: Vec<Vec<Value>>,
    current: Vec<Value>,
    executed: Vec<Vec<String>>,
    end: Option<End>,
}

impl Episode {
    /// A new episode of `item` (a `bfcl-mt` item: its `meta.turns` holds the later turns).
    pub fn new(index: usize, sample: i32, item: &Item) -> anyhow::Result<Episode> {
        let later_turns: Vec<Vec<Message>> =
            serde_json::from_value(item.meta["turns"].clone()).map_err(|e| anyhow::anyhow!("{}: meta.turns: {e}", item.key()))?;
        Ok(Episode {
            item: index,
            sample,
            messages: item.prompt.clone(),
            later_turns,
            turn: 0,
            steps_in_turn: 0,
            generations: 0,
            turns: Vec::new(),
            current: Vec::new(),
            executed: Vec::new(),
            end: None,
        })
    }

    /// The chat so far: what the model sees next.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The calls executed so far, one list per step (the sandbox replays them to rebuild state).
    pub fn executed(&self) -> &[Vec<String>] {
        &self.executed
    }

    /// Replies generated so far (for per-step seeds).
    pub fn generations(&self) -> u64 {
        self.generations
    }

    pub fn end(&self) -> Option<&End> {
        self.end.as_ref()
    }

    pub fn is_done(&self) -> bool {
        self.end.is_some()
    }

    /// Stop the episode for a reason outside the protocol (context, sandbox).
    pub fn fail(&mut self, reason: impl Into<String>) {
        if self.end.is_none() {
            self.end = Some(End::Failed(reason.into()));
        }
    }

    /// Record the model's `reply` whose step the sandbox could not run (`status`: timeout,
    /// memory, …), and stop the episode.
    pub fn fail_step(&mut self, reply: &str, status: &str) {
        if self.end.is_some() {
            return;
        }
        self.record(reply, json!({"reply": reply, "calls": null, "results": [], "error": status}));
        self.end = Some(End::Failed(format!("sandbox_{status}")));
    }

    /// Record the model's `reply` and what the sandbox made of it.
    pub fn advance(&mut self, reply: &str, out: StepOut, max_steps: usize) {
        if self.end.is_some() {
            return;
        }
        self.record(reply, json!({"reply": reply, "calls": out.calls, "results": out.results, "error": out.error}));
        match out.calls {
            Some(calls) if !calls.is_empty() => {
                for r in &out.results {
                    self.messages.push(Message { role: "tool".into(), content: r.clone() });
                }
                self.executed.push(calls);
                self.steps_in_turn += 1;
                if self.steps_in_turn > max_steps {
                    self.turns.push(std::mem::take(&mut self.current));
                    self.end = Some(End::StepLimit);
                }
            }
            _ => {
                self.turns.push(std::mem::take(&mut self.current));
                self.turn += 1;
                self.steps_in_turn = 0;
                match self.later_turns.get(self.turn - 1) {
                    Some(next) => self.messages.extend(next.iter().cloned()),
                    None => self.end = Some(End::Done),
                }
            }
        }
    }

    /// One generated reply: the assistant message and its transcript step.
    fn record(&mut self, reply: &str, step: Value) {
        self.generations += 1;
        self.messages.push(Message { role: "assistant".into(), content: reply.to_string() });
        self.current.push(step);
    }

    /// The transcript: the played turns (and an unfinished one, if any) as JSON text.
    pub fn transcript(&self) -> String {
        let mut turns = self.turns.clone();
        if !self.current.is_empty() {
            turns.push(self.current.clone());
        }
        serde_json::to_string(&turns).expect("JSON values serialise")
    }
}

/// Play `sampling.samples` episodes per bfcl-mt item of `items`: every live episode takes one
/// step per pass (its replies generated in batches, their calls decoded and executed in the
/// sandbox), until each has played its turns, hit `max_steps`, or can go no further (its prompt
/// leaves no room for a reply of `max_new_tokens`, the sandbox failed: then its answer carries
/// the failure as its verdict).
pub fn play(
    generator: &dyn Generator,
    items: &[Item],
    sampling: &Sampling,
    max_steps: usize,
    scorer: &Scorer,
    bar: Bar,
) -> anyhow::Result<Vec<Answer>> {
    let model = generator.model();
    let mut eps = Vec::new();
    for (i, it) in items.iter().enumerate().filter(|(_, it)| it.suite == "bfcl-mt") {
        for s in 0..sampling.samples {
            eps.push(Episode::new(i, s as i32, it)?);
        }
    }
    if eps.is_empty() {
        return Ok(Vec::new());
    }
    let ctx = model.context_length();
    let pb = bar(eps.len() as u64, "bfcl-mt episodes");
    loop {
        let mut live: Vec<(usize, Vec<u32>)> = Vec::new();
        for (e, ep) in eps.iter_mut().enumerate().filter(|(_, ep)| !ep.is_done()) {
            let prompt = model.encode_chat(&crate::chat(ep.messages()), true)?;
            if prompt.len() + sampling.params.max_new_tokens > ctx {
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
        // One call per turn for every live episode: the engine keeps its slots decoding.
        let reqs: Vec<GenerationRequest> = live
            .iter()
            .map(|(e, p)| {
                let ep = &eps[*e];
                let seed = items[ep.item].generation_seed(sampling.seed, ep.sample as usize, ep.generations());
                GenerationRequest { prompt: p.clone(), seed }
            })
            .collect();
        let gens = generator.generate(&reqs, &sampling.params)?;
        let steps: Vec<(&Value, &[Vec<String>], &str)> =
            live.iter().zip(&gens).map(|((e, _), g)| (&items[eps[*e].item].meta, eps[*e].executed(), g.text.as_str())).collect();
        let outs = scorer.bfcl_steps(&steps);
        for (((e, _), g), out) in live.iter().zip(&gens).zip(outs) {
            let ep = &mut eps[*e];
            match out {
                Ok(o) => ep.advance(&g.text, o, max_steps),
                Err(status) => ep.fail_step(&g.text, &status),
            }
            if ep.is_done() {
                pb.inc(1);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn item(turns: usize) -> Item {
        let later: Vec<Value> = (1..turns).map(|t| json!([{"role": "user", "content": format!("turn {t}")}])).collect();
        Item {
            suite: "bfcl-mt".into(),
            family: "tool-use".into(),
            task: "multi_turn_base".into(),
            item_id: "multi_turn_base_0".into(),
            prompt: vec![Message { role: "system".into(), content: "functions".into() }, Message { role: "user".into(), content: "turn 0".into() }],
            answer: None,
            reference: None,
            meta: json!({"turns": later}),
        }
    }

    fn calls(c: &[&str], results: &[&str]) -> StepOut {
        StepOut { calls: Some(c.iter().map(|s| s.to_string()).collect()), results: results.iter().map(|s| s.to_string()).collect(), error: None }
    }

    #[test]
    fn calls_continue_the_turn_and_a_reply_without_calls_ends_it() {
        let mut ep = Episode::new(0, 0, &item(2)).unwrap();
        ep.advance("[cd(folder='a')]", calls(&["cd(folder='a')"], &["None"]), MAX_STEPS);
        assert!(!ep.is_done());
        assert_eq!(ep.messages().last().unwrap().role, "tool");
        ep.advance("done", StepOut::default(), MAX_STEPS);
        // Turn 1's user message follows.
        assert_eq!(ep.messages().last().unwrap().content, "turn 1");
        ep.advance("oops(", StepOut { calls: None, results: vec![], error: Some("SyntaxError".into()) }, MAX_STEPS);
        assert_eq!(ep.end(), Some(&End::Done));
        assert_eq!(ep.executed(), &[vec!["cd(folder='a')".to_string()]]);
        let t: Vec<Vec<Value>> = serde_json::from_str(&ep.transcript()).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].len(), 2);
        assert_eq!(t[0][0]["calls"][0], "cd(folder='a')");
        assert_eq!(t[1][0]["error"], "SyntaxError");
        assert_eq!(ep.generations(), 3);
    }

    #[test]
    fn the_step_limit_force_quits_keeping_the_turn() {
        let mut ep = Episode::new(0, 0, &item(3)).unwrap();
        for _ in 0..3 {
            ep.advance("[ls()]", calls(&["ls()"], &["[]"]), 2);
        }
        assert_eq!(ep.end(), Some(&End::StepLimit));
        let t: Vec<Vec<Value>> = serde_json::from_str(&ep.transcript()).unwrap();
        assert_eq!(t.len(), 1, "later turns are not played");
        assert_eq!(t[0].len(), 3);
        // A finished episode ignores further replies.
        ep.advance("[ls()]", calls(&["ls()"], &["[]"]), 2);
        assert_eq!(ep.generations(), 3);
    }

    #[test]
    fn a_failed_episode_keeps_its_unfinished_turn() {
        let mut ep = Episode::new(0, 0, &item(2)).unwrap();
        ep.advance("[ls()]", calls(&["ls()"], &["[]"]), MAX_STEPS);
        ep.fail("context_exceeded");
        assert_eq!(ep.end(), Some(&End::Failed("context_exceeded".into())));
        let t: Vec<Vec<Value>> = serde_json::from_str(&ep.transcript()).unwrap();
        assert_eq!(t.len(), 1);
    }
}
