//! The designer warm-up's data: a validated pool of environments ([`pool_of`]) paired with
//! documents by domain and skill, a deterministic held-out split of both, and (prompt, response)
//! pairs whose prompt is rendered by [`crate::prompt::group_prompt`] — the very function
//! `spade-design` uses — and whose response is the environment written the way
//! [`crate::parse_response`] reads it ([`sequences`]), taken in a seeded order each epoch
//! ([`epoch_order`]). The training itself is `spade_train::sft`'s.

use std::collections::{BTreeSet, HashSet};

use crate::memory::{set_env_ids, strip_header};
use crate::prompt::{group_prompt, Document, PromptSpec, Templates};
use crate::{hash_hex, Result};
use spade_model::{Message, Model};
use spade_schema::{MemoryRow, Setting};

/// The warm-up's pool of one `setting`: environments read from `.py` files take the validator's
/// id, those of the other setting are left out, and an environment a grown pool holds twice is
/// kept once (its first copy).
pub fn pool_of(mut pool: Vec<MemoryRow>, setting: Setting) -> Vec<MemoryRow> {
    set_env_ids(&mut pool, spade_sandbox::validate::env_id);
    pool.retain(|e| e.setting.unwrap_or_default() == setting);
    let mut seen = HashSet::new();
    pool.retain(|e| seen.insert(e.env_id.clone()));
    pool
}

/// The corpus domains whose documents ground environments of a default skill (documents of any
/// domain serve a skill outside the table).
pub fn skill_domains(skill: &str) -> &'static [&'static str] {
    match skill {
        "mathematical-reasoning" => &["math"],
        "logical-deduction" => &["math", "code", "science"],
        "spatial-reasoning" => &["science", "math"],
        "pattern-recognition" => &["code", "math"],
        "optimisation" => &["code", "math"],
        "causal-inference" => &["science"],
        _ => &[],
    }
}

/// Whether item `id` of `kind` (`env` or `doc`) is held out: a fixed fraction chosen by hashing
/// (seed, kind, id), so the split never depends on order or on the rest of the pool.
pub fn held_out(seed: u64, kind: &str, id: &str, fraction: f64) -> bool {
    let h = hash_hex(&["warmup-split", &seed.to_string(), kind, id]);
    let x = u64::from_str_radix(&h, 16).unwrap_or(0) as f64 / u64::MAX as f64;
    x < fraction
}

/// The split of a pool and a corpus.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Split {
    pub train_envs: Vec<usize>,
    pub held_out_envs: Vec<usize>,
    pub train_docs: Vec<usize>,
    pub held_out_docs: Vec<usize>,
}

/// The ids of each side of a [`Split`] (what `spade-sft --split` writes).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SplitIds {
    pub train_envs: Vec<String>,
    pub held_out_envs: Vec<String>,
    pub train_docs: Vec<String>,
    pub held_out_docs: Vec<String>,
}

impl Split {
    /// The environment and document ids of each side.
    pub fn ids(&self, envs: &[MemoryRow], docs: &[Document]) -> SplitIds {
        let env_ids = |idx: &[usize]| idx.iter().map(|&i| envs[i].env_id.clone()).collect();
        let doc_ids = |idx: &[usize]| idx.iter().map(|&i| docs[i].doc_id.clone()).collect();
        SplitIds {
            train_envs: env_ids(&self.train_envs),
            held_out_envs: env_ids(&self.held_out_envs),
            train_docs: doc_ids(&self.train_docs),
            held_out_docs: doc_ids(&self.held_out_docs),
        }
    }
}

/// Splits environments (by `env_id`) and documents (by `doc_id`) with [`held_out`]. With two
/// or more items of a kind, at least one lands on each side.
pub fn split(envs: &[MemoryRow], docs: &[Document], seed: u64, fraction: f64) -> Split {
    let part = |ids: Vec<&str>, kind: &str| -> (Vec<usize>, Vec<usize>) {
        let (mut train, mut held): (Vec<usize>, Vec<usize>) = (0..ids.len()).partition(|&i| !held_out(seed, kind, ids[i], fraction));
        if fraction > 0.0 && held.is_empty() && train.len() >= 2 {
            held.push(train.pop().expect("two or more"));
        }
        if train.is_empty() && held.len() >= 2 {
            train.push(held.remove(0));
        }
        (train, held)
    };
    let (train_envs, held_out_envs) = part(envs.iter().map(|e| e.env_id.as_str()).collect(), "env");
    let (train_docs, held_out_docs) = part(docs.iter().map(|d| d.doc_id.as_str()).collect(), "doc");
    Split { train_envs, held_out_envs, train_docs, held_out_docs }
}

/// (environment, document) pairs: each environment with `per_env(env)` documents of its skill's
/// domains (any domain when none matches), chosen by a seeded hash order, never the same twice.
/// (`spade-sft --favour` gives some environments more documents than the rest.)
pub fn pairs(
    envs: &[MemoryRow],
    env_idx: &[usize],
    docs: &[Document],
    doc_idx: &[usize],
    per_env: impl Fn(&MemoryRow) -> usize,
    seed: u64,
) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for &e in env_idx {
        let env = &envs[e];
        let per_env = per_env(env);
        let skill = env.skill.as_deref().unwrap_or("");
        let wanted = skill_domains(skill);
        let matching: Vec<usize> = doc_idx.iter().copied().filter(|&d| docs[d].domain.as_deref().is_some_and(|dom| wanted.contains(&dom))).collect();
        let mut cands = if matching.is_empty() { doc_idx.to_vec() } else { matching };
        cands.sort_by_key(|&d| hash_hex(&["warmup-pair", &seed.to_string(), &env.env_id, &docs[d].doc_id]));
        let mut seen = BTreeSet::new();
        for d in cands.into_iter().take(per_env) {
            if seen.insert(d) {
                out.push((e, d));
            }
        }
    }
    out
}

/// The response the designer is taught to write for `env`: one fenced Python block opening with
/// the header comments (skill, setting and — with an inline hint — the hint), then the code; the
/// format [`crate::parse_response`] reads back into code, hint and skill.
pub fn target_text(env: &MemoryRow, hint_mode: crate::HintMode) -> String {
    let skill = env.skill.as_deref().unwrap_or("unknown");
    let setting = env.setting.unwrap_or_default();
    let mut s = format!("```python\n# skill: {skill}\n# setting: {setting}\n");
    if hint_mode == crate::HintMode::Inline {
        if let Some(h) = env.hint.as_deref().filter(|h| !h.trim().is_empty()) {
            s.push_str(&format!("# hint: {}\n", h.trim()));
        }
    }
    let body = strip_header(&env.code);
    s.push_str(body.trim_start_matches('\n').trim_end());
    // The reference solver, when the environment has one: the warm-up teaches the pattern.
    if let Some(solver) = env.solver.as_deref().filter(|x| !x.trim().is_empty()) {
        s.push_str(&format!("\n\n{}\n{}", spade_sandbox::validate::SOLVER_MARKER, solver.trim_end()));
    }
    s.push_str("\n```");
    s
}

/// A supervised sequence: its tokens, and its mask (1 on the target's tokens).
pub type Sequence = (Vec<u32>, Vec<u8>);

/// A supervised sequence: the prompt's tokens (mask 0), then the target as the model's chat
/// template renders an assistant answer, cut after its end-of-turn token (mask 1) — what
/// generation from that prompt would produce, ending where generation stops. When the template
/// tokenises the boundary differently, the target's own tokens and an end-of-sequence token.
pub fn supervised_sequence(model: &Model, prompt: &[Message], prompt_ids: &[u32], target: &str) -> Result<Sequence> {
    let eos = model.eos_ids();
    let mut msgs = prompt.to_vec();
    msgs.push(Message::assistant(target.to_string()));
    let full = model.encode_chat(&msgs, false)?;
    let mut tail: Vec<u32> = match full.strip_prefix(prompt_ids) {
        Some(rest) => rest.to_vec(),
        None => model.tokenizer().encode(target, false)?,
    };
    match tail.iter().position(|t| eos.contains(t)) {
        Some(p) => tail.truncate(p + 1),
        None => tail.push(*eos.first().ok_or_else(|| crate::Error::Invalid("the model names no end-of-sequence token".into()))?),
    }
    let mut tokens = prompt_ids.to_vec();
    let mut mask = vec![0u8; tokens.len()];
    tokens.extend(&tail);
    mask.extend(std::iter::repeat_n(1u8, tail.len()));
    Ok((tokens, mask))
}

/// What renders a pair's prompt as `spade-design` does: the model (its tokenizer and chat
/// template), the templates, the prompt spec (its hint mode also shapes the target), the prompt's
/// token budget, and the run's seed (it breaks the ties of the examples' choice).
pub struct Render<'a> {
    pub model: &'a Model,
    pub templates: &'a Templates,
    pub spec: &'a PromptSpec,
    pub budget: usize,
    pub seed: u64,
}

/// Why a pair has no supervised sequence.
#[derive(Debug, thiserror::Error)]
pub enum PairError {
    /// Its prompt could not be rendered (e.g. it does not fit the budget).
    #[error("prompt for environment {env_id} and document {doc_id}")]
    Prompt {
        env_id: String,
        doc_id: String,
        #[source]
        source: Box<crate::Error>,
    },
    /// The model could not encode it.
    #[error(transparent)]
    Encoding(#[from] crate::Error),
}

/// The supervised sequences ([`supervised_sequence`]) of (environment, document) `pairs` of
/// `envs` and `docs`: the designer prompt of the environment's skill and the document, its memory
/// examples drawn from the environments `examples` (indices into `envs`; less the target itself
/// when `exclude_target`, as for training pairs), then the environment as [`target_text`].
pub fn sequences(
    r: &Render,
    envs: &[MemoryRow],
    examples: &[usize],
    docs: &[Document],
    pairs: &[(usize, usize)],
    exclude_target: bool,
) -> Result<Vec<Sequence>, PairError> {
    let pool: Vec<&MemoryRow> = examples.iter().map(|&i| &envs[i]).collect();
    let mut out = Vec::with_capacity(pairs.len());
    for &(e, d) in pairs {
        let (env, doc) = (&envs[e], &docs[d]);
        let memory: Vec<MemoryRow> = pool.iter().filter(|m| !exclude_target || m.env_id != env.env_id).map(|&m| m.clone()).collect();
        let skill = env.skill.clone().unwrap_or_else(|| "unknown".into());
        let tie = format!("warmup/{}/{}/{}", r.seed, env.env_id, doc.doc_id);
        let p = group_prompt(r.model, r.templates, r.spec, &memory, Some(doc), &skill, &tie, r.budget).map_err(|source| PairError::Prompt {
            env_id: env.env_id.clone(),
            doc_id: doc.doc_id.clone(),
            source: Box::new(source),
        })?;
        out.push(supervised_sequence(r.model, &p.messages, &p.ids, &target_text(env, r.spec.hint_mode))?);
    }
    Ok(out)
}

/// The order of `n` training pairs in `epoch` (from 0): a seeded shuffle, anew each epoch.
pub fn epoch_order(seed: u64, epoch: usize, n: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| hash_hex(&["warmup-order", &seed.to_string(), &epoch.to_string(), &i.to_string()]));
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_response;

    fn env(id: &str, skill: &str) -> MemoryRow {
        MemoryRow {
            env_id: id.into(),
            code: format!(
                "# skill: {skill}\n# hint: old\nimport random\n\nclass {id}Env:\n    def reset(self, seed=None):\n        return 'x', {{}}\n"
            ),
            hint: Some("Think first.".into()),
            skill: Some(skill.into()),
            setting: Some(Setting::Games),
            label: spade_schema::Label::Seed,
            ..Default::default()
        }
    }

    fn doc(id: &str, domain: &str) -> Document {
        Document { doc_id: id.into(), domain: Some(domain.into()), text: "t".into() }
    }

    #[test]
    fn the_target_parses_back_into_code_hint_and_skill() {
        let e = env("A", "causal-inference");
        let t = target_text(&e, crate::HintMode::Inline);
        let p = parse_response(&t);
        assert_eq!(p.error, None);
        assert_eq!(p.hint.as_deref(), Some("Think first."));
        assert!(p.skill_tags.contains(&"causal-inference".to_string()), "{:?}", p.skill_tags);
        assert!(p.code.unwrap().contains("class AEnv:"));
        assert!(!target_text(&e, crate::HintMode::SelfCall).contains("# hint:"));
        // A reference solver is part of the target, behind its marker, and parses back apart.
        let e = MemoryRow { solver: Some("def solve(observations):\n    return 'x'\n".into()), ..e };
        let code = parse_response(&target_text(&e, crate::HintMode::Inline)).code.unwrap();
        let (env_code, solver) = spade_sandbox::validate::split_solver(&code);
        assert!(env_code.contains("class AEnv:") && !env_code.contains("solve"));
        assert_eq!(solver.as_deref(), Some("def solve(observations):\n    return 'x'\n"));
    }

    #[test]
    fn split_is_by_id_and_pairs_follow_the_domains() {
        let envs: Vec<MemoryRow> = (0..40).map(|i| env(&format!("E{i}"), if i % 2 == 0 { "causal-inference" } else { "x" })).collect();
        let docs: Vec<Document> = (0..40).map(|i| doc(&format!("d{i}"), ["math", "science", "code"][i % 3])).collect();
        let s = split(&envs, &docs, 7, 0.25);
        assert!(!s.held_out_envs.is_empty() && !s.held_out_docs.is_empty());
        assert_eq!(s.train_envs.len() + s.held_out_envs.len(), 40);
        // The same id is held out whatever else is in the pool.
        let s2 = split(&envs[..20], &docs, 7, 0.25);
        assert!(s2.held_out_envs.iter().all(|i| s.held_out_envs.contains(i)));
        let p = pairs(&envs, &s.train_envs, &docs, &s.train_docs, |_| 2, 7);
        for &(e, d) in &p {
            assert!(s.train_envs.contains(&e) && s.train_docs.contains(&d), "held-out items never pair for training");
            if envs[e].skill.as_deref() == Some("causal-inference") {
                assert_eq!(docs[d].domain.as_deref(), Some("science"));
            }
        }
        assert_eq!(p.len(), 2 * s.train_envs.len());
        // A favoured environment gets more documents, each once, the others' pairs unchanged.
        let fav = envs[s.train_envs[0]].env_id.clone();
        let more = pairs(&envs, &s.train_envs, &docs, &s.train_docs, |e| if e.env_id == fav { 5 } else { 2 }, 7);
        let of = |p: &[(usize, usize)], e: usize| p.iter().filter(|x| x.0 == e).map(|x| x.1).collect::<Vec<_>>();
        let fav_docs = of(&more, s.train_envs[0]);
        assert_eq!(fav_docs.len(), 5);
        assert_eq!(fav_docs.iter().collect::<BTreeSet<_>>().len(), 5);
        assert_eq!(fav_docs[..2], of(&p, s.train_envs[0])[..], "the first documents are the unfavoured pairs'");
        assert_eq!(more.len(), p.len() + 3);
        assert_eq!(of(&more, s.train_envs[1]), of(&p, s.train_envs[1]));
    }

    #[test]
    fn the_pool_keeps_one_copy_of_each_environment_of_the_setting() {
        let tool = MemoryRow { setting: Some(Setting::ToolUse), ..env("T", "x") };
        let pool = pool_of(vec![env("A", "x"), env("B", "x"), env("A", "y"), tool.clone()], Setting::Games);
        assert_eq!(pool.iter().map(|e| (e.env_id.as_str(), e.skill.as_deref())).collect::<Vec<_>>(), [("A", Some("x")), ("B", Some("x"))]);
        assert_eq!(pool_of(vec![env("A", "x"), tool], Setting::ToolUse).len(), 1);
        // The split's ids name each side's items.
        let docs = [doc("d0", "math"), doc("d1", "code")];
        let s = Split { train_envs: vec![1], held_out_envs: vec![0], train_docs: vec![0, 1], held_out_docs: vec![] };
        let ids = s.ids(&pool, &docs);
        assert_eq!(
            (ids.train_envs, ids.held_out_envs, ids.train_docs),
            (vec!["B".to_string()], vec!["A".to_string()], vec!["d0".into(), "d1".into()])
        );
    }

    #[test]
    fn each_epoch_has_its_own_seeded_order() {
        let o = epoch_order(7, 0, 20);
        let mut sorted = o.clone();
        sorted.sort();
        assert_eq!(sorted, (0..20).collect::<Vec<_>>(), "a permutation");
        assert_eq!(o, epoch_order(7, 0, 20));
        assert_ne!(o, epoch_order(7, 1, 20));
        assert_ne!(o, epoch_order(8, 0, 20));
    }

    #[test]
    fn a_prompt_error_names_its_pair_then_the_cause() {
        use std::error::Error as _;
        let e = PairError::Prompt { env_id: "A".into(), doc_id: "d0".into(), source: Box::new(crate::Error::Budget("too long".into())) };
        assert_eq!(e.to_string(), "prompt for environment A and document d0");
        assert_eq!(e.source().map(|c| c.to_string()).as_deref(), Some("too long"));
    }
}
