//! The designer warm-up's data: a validated pool of environments paired with documents by domain
//! and skill, a deterministic held-out split of both, and (prompt, response) pairs whose prompt is
//! rendered by [`crate::prompt::group_prompt`] — the very function `spade-design` uses — and whose
//! response is the environment written the way [`crate::parse_response`] reads it.

use std::collections::BTreeSet;

use crate::memory::{strip_header, MemoryEntry};
use crate::prompt::Document;
use crate::{hash_hex, Result};
use spade_model::{Message, Model};

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

/// Splits environments (by `env_id`) and documents (by `doc_id`) with [`held_out`]. With two
/// or more items of a kind, at least one lands on each side.
pub fn split(envs: &[MemoryEntry], docs: &[Document], seed: u64, fraction: f64) -> Split {
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

/// (environment, document) pairs: each environment with `per_env` documents of its skill's
/// domains (any domain when none matches), chosen by a seeded hash order, never the same twice.
pub fn pairs(envs: &[MemoryEntry], env_idx: &[usize], docs: &[Document], doc_idx: &[usize], per_env: usize, seed: u64) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for &e in env_idx {
        let env = &envs[e];
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
pub fn target_text(env: &MemoryEntry, hint_mode: crate::HintMode) -> String {
    let skill = env.skill.as_deref().unwrap_or("unknown");
    let setting = env.setting.as_deref().unwrap_or("games");
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

/// A supervised sequence: the prompt's tokens (mask 0), then the target as the model's chat
/// template renders an assistant answer, cut after its end-of-turn token (mask 1) — what
/// generation from that prompt would produce, ending where generation stops. When the template
/// tokenises the boundary differently, the target's own tokens and an end-of-sequence token.
pub fn supervised_sequence(model: &Model, prompt: &[Message], prompt_ids: &[u32], target: &str) -> Result<(Vec<u32>, Vec<u8>)> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_response;

    fn env(id: &str, skill: &str) -> MemoryEntry {
        MemoryEntry {
            env_id: id.into(),
            code: format!(
                "# skill: {skill}\n# hint: old\nimport random\n\nclass {id}Env:\n    def reset(self, seed=None):\n        return 'x', {{}}\n"
            ),
            hint: Some("Think first.".into()),
            skill: Some(skill.into()),
            setting: Some("games".into()),
            label: spade_schema::Label::Seed,
            regret: None,
            nohint_win_rate: None,
            solver: None,
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
        let e = MemoryEntry { solver: Some("def solve(observations):\n    return 'x'\n".into()), ..e };
        let code = parse_response(&target_text(&e, crate::HintMode::Inline)).code.unwrap();
        let (env_code, solver) = spade_sandbox::validate::split_solver(&code);
        assert!(env_code.contains("class AEnv:") && !env_code.contains("solve"));
        assert_eq!(solver.as_deref(), Some("def solve(observations):\n    return 'x'\n"));
    }

    #[test]
    fn split_is_by_id_and_pairs_follow_the_domains() {
        let envs: Vec<MemoryEntry> = (0..40).map(|i| env(&format!("E{i}"), if i % 2 == 0 { "causal-inference" } else { "x" })).collect();
        let docs: Vec<Document> = (0..40).map(|i| doc(&format!("d{i}"), ["math", "science", "code"][i % 3])).collect();
        let s = split(&envs, &docs, 7, 0.25);
        assert!(!s.held_out_envs.is_empty() && !s.held_out_docs.is_empty());
        assert_eq!(s.train_envs.len() + s.held_out_envs.len(), 40);
        // The same id is held out whatever else is in the pool.
        let s2 = split(&envs[..20], &docs, 7, 0.25);
        assert!(s2.held_out_envs.iter().all(|i| s.held_out_envs.contains(i)));
        let p = pairs(&envs, &s.train_envs, &docs, &s.train_docs, 2, 7);
        for &(e, d) in &p {
            assert!(s.train_envs.contains(&e) && s.train_docs.contains(&d), "held-out items never pair for training");
            if envs[e].skill.as_deref() == Some("causal-inference") {
                assert_eq!(docs[d].domain.as_deref(), Some("science"));
            }
        }
        assert_eq!(p.len(), 2 * s.train_envs.len());
    }
}
