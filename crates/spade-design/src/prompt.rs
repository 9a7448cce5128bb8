//! Designer, hint and repair prompts: minijinja templates read from a folder (`data/prompts/`,
//! editable without recompiling), rendered into chat messages and fitted to a token budget.
//!
//! [`design_prompt`] is the one place a designer prompt is made; the supervised warm-up renders
//! its prompts through it too, so training and sampling see the same text.

use std::path::{Path, PathBuf};

use serde::Serialize;
use spade_model::{Message, Model};

use crate::memory::{class_name, strip_header};
use crate::{Error, Result};
use spade_schema::{MemoryRow, Setting};

/// Template files a prompt folder must hold.
pub const TEMPLATE_FILES: &[&str] = &[
    "design-games-system.j2",
    "design-games-user.j2",
    "design-tool-use-system.j2",
    "design-tool-use-user.j2",
    "hint-system.j2",
    "hint-user.j2",
    "repair.j2",
];

/// The environment's relative path of the default prompt folder.
pub const DEFAULT_PROMPTS_RELPATH: &str = "data/prompts";

/// The default prompt folder: `./data/prompts` when it exists, else spade's home's
/// ([`spade_model::home`]).
pub fn default_prompts_dir() -> PathBuf {
    let local = PathBuf::from(DEFAULT_PROMPTS_RELPATH);
    if local.is_dir() {
        return local;
    }
    spade_model::home().join(DEFAULT_PROMPTS_RELPATH)
}

/// The default seed environments folder: `./data/seed-envs` when it exists, else spade's home's.
pub fn default_seed_dir() -> PathBuf {
    let local = PathBuf::from("data/seed-envs");
    if local.is_dir() {
        return local;
    }
    spade_model::home().join("data/seed-envs")
}

/// The compiled prompt templates of one folder.
pub struct Templates {
    env: minijinja::Environment<'static>,
    dir: PathBuf,
}

impl std::fmt::Debug for Templates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Templates").field("dir", &self.dir).finish()
    }
}

impl Templates {
    /// Reads and compiles every template of [`TEMPLATE_FILES`] from `dir`.
    pub fn load(dir: &Path) -> Result<Templates> {
        let mut env = minijinja::Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        for name in TEMPLATE_FILES {
            let p = dir.join(name);
            let src = std::fs::read_to_string(&p).map_err(|e| Error::Io(format!("{}: {e}", p.display())))?;
            env.add_template_owned(name.to_string(), src).map_err(|e| Error::Template(format!("{}: {e}", p.display())))?;
        }
        Ok(Templates { env, dir: dir.to_path_buf() })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Renders template `name` with `ctx`; surrounding whitespace trimmed.
    pub fn render(&self, name: &str, ctx: impl Serialize) -> Result<String> {
        let t = self.env.get_template(name).map_err(|e| Error::Template(format!("{name}: {e}")))?;
        let s = t.render(ctx).map_err(|e| Error::Template(format!("{}/{name}: {e:#}", self.dir.display())))?;
        Ok(s.trim().to_string())
    }
}

/// Who writes the privileged hint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
pub enum HintMode {
    /// The designer writes it with the environment (`# hint:` in the code).
    #[serde(rename = "inline")]
    #[value(name = "inline")]
    Inline,
    /// A second call reads the environment and writes it.
    #[serde(rename = "self")]
    #[value(name = "self")]
    SelfCall,
}

impl HintMode {
    /// The name the templates compare with (`inline`, `self`).
    pub fn as_str(self) -> &'static str {
        match self {
            HintMode::Inline => "inline",
            HintMode::SelfCall => "self",
        }
    }
}

/// The paper's six skills.
pub const DEFAULT_SKILLS: &[&str] =
    &["mathematical-reasoning", "logical-deduction", "spatial-reasoning", "pattern-recognition", "optimisation", "causal-inference"];

/// The tool-use setting's six skills (the games' six are about reasoning; these are about using tools).
pub const TOOL_USE_SKILLS: &[&str] =
    &["api-orchestration", "data-retrieval", "state-modification", "error-recovery", "tool-selection", "multi-step-workflow"];

/// The default skills of a setting.
pub fn default_skills(setting: Setting) -> &'static [&'static str] {
    if setting == Setting::ToolUse {
        TOOL_USE_SKILLS
    } else {
        DEFAULT_SKILLS
    }
}

/// A one-line description of a default skill (None for a custom one).
pub fn skill_description(skill: &str) -> Option<&'static str> {
    Some(match skill {
        "api-orchestration" => "chaining tool calls where one call's result is the next call's argument",
        "data-retrieval" => "finding a record or value by querying and filtering with tools",
        "state-modification" => "changing the environment's state with tools (create, update, move) and checking the result",
        "error-recovery" => "noticing a failed or wrong tool result and calling again with corrected arguments",
        "tool-selection" => "choosing the right tool among similar, decoy or irrelevant ones",
        "multi-step-workflow" => "completing a task of several dependent steps in the right order",
        "mathematical-reasoning" => "computing an exact numeric answer through several arithmetic or algebraic steps",
        "logical-deduction" => "deriving what must be true from rules, constraints or statements",
        "spatial-reasoning" => "tracking positions, directions, moves or shapes on a grid or in space",
        "pattern-recognition" => "finding the rule behind a sequence, a code or a set of examples and applying it",
        "optimisation" => "finding the best choice (cheapest, shortest, largest) among many options",
        "causal-inference" => "telling causes from correlations, predicting the effect of interventions",
        _ => return None,
    })
}

/// The document a prompt is grounded on.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct Document {
    pub doc_id: String,
    pub domain: Option<String>,
    pub text: String,
}

/// Everything a designer prompt is made of, before fitting to the budget.
#[derive(Debug, Clone)]
pub struct PromptInputs<'a> {
    pub setting: Setting,
    pub skill: &'a str,
    /// `inline` or `self`.
    pub hint_mode: HintMode,
    pub document: Option<&'a Document>,
    pub examples: Vec<&'a MemoryRow>,
    pub negatives: Vec<&'a MemoryRow>,
}

/// What made it into a prompt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PromptInfo {
    /// Characters of the document shown (0 without a document).
    pub doc_chars: usize,
    pub doc_cut: bool,
    /// `env_id`s of the examples shown.
    pub examples: Vec<String>,
    /// Examples whose code was cut.
    pub examples_cut: usize,
    pub negatives: Vec<String>,
    pub tokens: usize,
}

/// A rendered, tokenized prompt.
#[derive(Debug, Clone)]
pub struct Prompt {
    pub messages: Vec<Message>,
    pub ids: Vec<u32>,
    pub info: PromptInfo,
}

#[derive(Serialize)]
struct ExampleCtx {
    class_name: String,
    skill: String,
    setting: Setting,
    hint: Option<String>,
    code: String,
    regret: Option<f64>,
    win_rate: Option<f64>,
    cut: bool,
}

#[derive(Serialize)]
struct NegativeCtx {
    class_name: String,
    skill: String,
    label: String,
    win_rate: Option<f64>,
    hint: Option<String>,
}

/// The first `frac` of `text` by characters, cut at a word boundary.
fn cut_text(text: &str, frac: f64) -> (String, bool) {
    if frac >= 1.0 {
        return (text.to_string(), false);
    }
    let n = text.chars().count();
    let keep = ((n as f64) * frac).floor() as usize;
    if keep == 0 {
        return (String::new(), n > 0);
    }
    let mut s: String = text.chars().take(keep).collect();
    if let Some(sp) = s.rfind(char::is_whitespace) {
        if sp > s.len() / 2 {
            s.truncate(sp);
        }
    }
    (format!("{} …", s.trim_end()), true)
}

/// The first `frac` of `code` by characters, cut at a line boundary.
fn cut_code(code: &str, frac: f64) -> (String, bool) {
    if frac >= 1.0 {
        return (code.to_string(), false);
    }
    let keep = ((code.len() as f64) * frac) as usize;
    let mut out = String::new();
    for line in code.lines() {
        if out.len() + line.len() + 1 > keep {
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.push_str("# … (rest of the example cut)\n");
    (out, true)
}

/// Fitting steps, in order: (document fraction, examples kept, example code fraction).
fn plans(n_examples: usize) -> Vec<(f64, usize, f64)> {
    let mut v = vec![(1.0, n_examples, 1.0), (0.6, n_examples, 1.0)];
    for k in (1..n_examples).rev() {
        v.push((0.6, k, 1.0));
    }
    for f in [0.4, 0.25] {
        v.push((f, n_examples.min(1), 1.0));
    }
    for c in [0.6, 0.35] {
        v.push((0.25, n_examples.min(1), c));
    }
    for f in [0.15, 0.08, 0.04, 0.02] {
        v.push((f, 0, 1.0));
    }
    v.push((0.0, 0, 1.0));
    v
}

/// Renders the designer prompt for `inputs` and fits it into `budget` tokens (prompt tokens,
/// chat template applied): the document is cut first, then examples are dropped (the last first),
/// then the remaining example and the document are cut further. Errors when even the bare
/// instructions exceed the budget.
pub fn design_prompt(model: &Model, t: &Templates, inputs: &PromptInputs, budget: usize) -> Result<Prompt> {
    let setting = inputs.setting;
    let sys_name = format!("design-{setting}-system.j2");
    let user_name = format!("design-{setting}-user.j2");
    let base = minijinja::context! {
        setting => setting,
        skill => inputs.skill,
        skill_description => skill_description(inputs.skill),
        hint_mode => inputs.hint_mode.as_str(),
    };
    let system = t.render(&sys_name, &base)?;
    let mut smallest = usize::MAX;
    for (doc_frac, n_ex, code_frac) in plans(inputs.examples.len()) {
        let (doc, doc_cut) = match inputs.document {
            Some(d) => {
                let (text, cut) = cut_text(&d.text, doc_frac);
                (Some(Document { doc_id: d.doc_id.clone(), domain: d.domain.clone(), text }), cut)
            }
            None => (None, false),
        };
        let mut examples_cut = 0;
        let examples: Vec<ExampleCtx> = inputs.examples[..n_ex]
            .iter()
            .map(|e| {
                let (mut code, cut) = cut_code(strip_header(&e.code).trim_start_matches('\n'), code_frac);
                examples_cut += usize::from(cut);
                // A whole example shows its reference solver, the pattern the designer may follow.
                if let Some(solver) = e.solver.as_deref().filter(|x| !cut && !x.trim().is_empty()) {
                    code = format!("{}\n\n{}\n{}\n", code.trim_end(), spade_sandbox::validate::SOLVER_MARKER, solver.trim_end());
                }
                ExampleCtx {
                    class_name: class_name(&e.code).unwrap_or_else(|| "Env".into()),
                    skill: e.skill.clone().unwrap_or_else(|| "unknown".into()),
                    setting: e.setting.unwrap_or_default(),
                    hint: e.hint.clone(),
                    code,
                    regret: e.regret,
                    win_rate: e.nohint_win_rate,
                    cut,
                }
            })
            .collect();
        let negatives: Vec<NegativeCtx> = inputs
            .negatives
            .iter()
            .map(|e| NegativeCtx {
                class_name: class_name(&e.code).unwrap_or_else(|| "Env".into()),
                skill: e.skill.clone().unwrap_or_else(|| "unknown".into()),
                label: e.label.to_string(),
                win_rate: e.nohint_win_rate,
                hint: e.hint.clone(),
            })
            .collect();
        let user = t.render(
            &user_name,
            minijinja::context! {
                setting => setting,
                skill => inputs.skill,
                skill_description => skill_description(inputs.skill),
                hint_mode => inputs.hint_mode.as_str(),
                document => doc,
                document_cut => doc_cut,
                examples => examples,
                negatives => negatives,
            },
        )?;
        let messages = vec![Message::system(system.clone()), Message::user(user)];
        let ids = model.encode_chat(&messages, true)?;
        smallest = smallest.min(ids.len());
        if ids.len() <= budget {
            let info = PromptInfo {
                doc_chars: doc.as_ref().map(|d| d.text.chars().count()).unwrap_or(0),
                doc_cut,
                examples: inputs.examples[..n_ex].iter().map(|e| e.env_id.clone()).collect(),
                examples_cut,
                negatives: inputs.negatives.iter().map(|e| e.env_id.clone()).collect(),
                tokens: ids.len(),
            };
            return Ok(Prompt { messages, ids, info });
        }
    }
    Err(Error::Budget(format!(
        "the designer prompt needs at least {smallest} tokens without document or examples, but only {budget} are left \
         (context {} − max new tokens); lower --max-new-tokens or shorten the templates",
        model.context_length()
    )))
}

/// How a designer prompt is assembled from the memory (the knobs of `spade-design`).
#[derive(Debug, Clone, Copy)]
pub struct PromptSpec {
    pub setting: Setting,
    /// `inline` or `self`.
    pub hint_mode: HintMode,
    /// Memory examples shown (the highest-regret ones of the skill first).
    pub examples: usize,
    /// Too-easy / too-hard environments described as negatives.
    pub negatives: usize,
}

/// The designer prompt of one group — examples and negatives chosen from `memory` for `skill`
/// (ties broken by `tie`), the document, fitted to `budget` — exactly as `spade-design` builds it.
/// The warm-up builds its prompts with this same function.
#[allow(clippy::too_many_arguments)]
pub fn group_prompt(
    model: &Model,
    t: &Templates,
    spec: &PromptSpec,
    memory: &[MemoryRow],
    document: Option<&Document>,
    skill: &str,
    tie: &str,
    budget: usize,
) -> Result<Prompt> {
    let inputs = PromptInputs {
        setting: spec.setting,
        skill,
        hint_mode: spec.hint_mode,
        document,
        examples: crate::memory::choose_examples(memory, skill, spec.setting, spec.examples, tie),
        negatives: crate::memory::choose_negatives(memory, skill, spec.negatives, tie),
    };
    design_prompt(model, t, &inputs, budget)
}

/// The `--hint self` prompt: the model reads the environment code and writes the hint. The code
/// is cut (by lines) to fit `budget`.
pub fn hint_prompt(model: &Model, t: &Templates, code: &str, skill: &str, setting: Setting, budget: usize) -> Result<Vec<u32>> {
    hint_messages(model, t, code, skill, setting, budget).map(|(_, ids)| ids)
}

/// [`hint_prompt`] with its messages.
pub fn hint_messages(model: &Model, t: &Templates, code: &str, skill: &str, setting: Setting, budget: usize) -> Result<(Vec<Message>, Vec<u32>)> {
    let system = t.render("hint-system.j2", minijinja::context! { setting => setting, skill => skill })?;
    let body = strip_header(code);
    for frac in [1.0, 0.75, 0.5, 0.35, 0.25, 0.15] {
        let (c, cut) = cut_code(&body, frac);
        let user = t.render("hint-user.j2", minijinja::context! { setting => setting, skill => skill, code => c, code_cut => cut })?;
        let messages = vec![Message::system(system.clone()), Message::user(user)];
        let ids = model.encode_chat(&messages, true)?;
        if ids.len() <= budget {
            return Ok((messages, ids));
        }
    }
    Err(Error::Budget(format!("the hint prompt does not fit {budget} tokens")))
}

/// The repair turn's user message: the validation error of the previous attempt.
pub fn repair_message(t: &Templates, setting: Setting, stage: &str, error: &str, attempt: usize, hint_mode: HintMode) -> Result<Message> {
    let text = t.render(
        "repair.j2",
        minijinja::context! { setting => setting, stage => stage, error => error, attempt => attempt, hint_mode => hint_mode.as_str() },
    )?;
    Ok(Message::user(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_keep_boundaries() {
        let (s, cut) = cut_text("alpha beta gamma delta", 0.5);
        assert!(cut && s.starts_with("alpha") && s.ends_with('…'), "{s}");
        assert_eq!(cut_text("abc", 1.0), ("abc".into(), false));
        let (c, cut) = cut_code("a = 1\nb = 2\nc = 3\n", 0.5);
        assert!(cut && c.starts_with("a = 1\n") && c.ends_with("cut)\n"), "{c}");
    }

    #[test]
    fn plans_shrink_monotonically() {
        let p = plans(2);
        assert_eq!(p[0], (1.0, 2, 1.0));
        assert_eq!(*p.last().unwrap(), (0.0, 0, 1.0));
        for w in p.windows(2) {
            assert!(w[1].0 <= w[0].0 && w[1].1 <= w[0].1);
        }
    }

    #[test]
    fn default_templates_compile() {
        let t = Templates::load(&default_prompts_dir()).unwrap();
        let s = t
            .render("repair.j2", minijinja::context! { setting => "games", stage => "syntax", error => "E", attempt => 1, hint_mode => "inline" })
            .unwrap();
        assert!(s.contains('E'));
    }
}
