//! The agent's prompt: a system prompt per setting and a first-observation template (files under
//! `data/prompts/`, built in, or read from a folder with `--prompts`), and the chat-template
//! segments appended between turns.
//!
//! Templates (Jinja, rendered with minijinja):
//! - `agent-system-games.j2`, `agent-system-tool-use.j2`: the system prompt (variables: none);
//! - `agent-first-observation.j2`: the first user message (variables: `observation`, `hint` —
//!   set only in the hint arm —, `setting`). Later observations are sent as they are.

use std::path::Path;

use spade_model::{ChatTemplate, Message};

use crate::{Error, Result, Setting};

pub const SYSTEM_GAMES: &str = "agent-system-games.j2";
pub const SYSTEM_TOOL_USE: &str = "agent-system-tool-use.j2";
pub const FIRST_OBSERVATION: &str = "agent-first-observation.j2";

const BUILTIN: [(&str, &str); 3] = [
    (SYSTEM_GAMES, include_str!("../../../data/prompts/agent-system-games.j2")),
    (SYSTEM_TOOL_USE, include_str!("../../../data/prompts/agent-system-tool-use.j2")),
    (FIRST_OBSERVATION, include_str!("../../../data/prompts/agent-first-observation.j2")),
];

/// The agent's prompt templates.
#[derive(Clone)]
pub struct Templates {
    env: minijinja::Environment<'static>,
}

impl std::fmt::Debug for Templates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Templates")
    }
}

impl Default for Templates {
    fn default() -> Self {
        Templates::from_sources(BUILTIN.iter().map(|(n, s)| (n.to_string(), s.to_string())).collect()).expect("built-in templates compile")
    }
}

impl Templates {
    /// Templates read from a folder holding the three files.
    pub fn from_dir(dir: &Path) -> Result<Templates> {
        let mut sources = Vec::new();
        for (name, _) in BUILTIN {
            let p = dir.join(name);
            let text = std::fs::read_to_string(&p).map_err(|e| Error::Template { name: p.display().to_string(), message: e.to_string() })?;
            sources.push((name.to_string(), text));
        }
        Templates::from_sources(sources)
    }

    /// Templates from a folder (`--prompts DIR`), else the built-in ones.
    pub fn from_dir_or_builtin(dir: Option<&Path>) -> Result<Templates> {
        dir.map_or_else(|| Ok(Templates::default()), Templates::from_dir)
    }

    fn from_sources(sources: Vec<(String, String)>) -> Result<Templates> {
        let mut env = minijinja::Environment::new();
        env.set_undefined_behavior(minijinja::UndefinedBehavior::Strict);
        for (name, text) in sources {
            // A trailing newline of the file is not part of the prompt.
            let text = text.strip_suffix('\n').map(str::to_string).unwrap_or(text);
            env.add_template_owned(name.clone(), text).map_err(|e| Error::Template { name: name.clone(), message: e.to_string() })?;
        }
        Ok(Templates { env })
    }

    fn render(&self, name: &str, ctx: minijinja::Value) -> Result<String> {
        let t = self.env.get_template(name).map_err(|e| Error::Template { name: name.into(), message: e.to_string() })?;
        t.render(ctx).map_err(|e| Error::Template { name: name.into(), message: e.to_string() })
    }

    /// The system prompt of a setting.
    pub fn system(&self, setting: Setting) -> Result<String> {
        let name = match setting {
            Setting::Games => SYSTEM_GAMES,
            Setting::ToolUse => SYSTEM_TOOL_USE,
        };
        self.render(name, minijinja::context! {})
    }

    /// The first user message: the observation, the tools a tool environment declares (reset's
    /// `info["tools"]`, JSON schemas), and the hint in the hint arm.
    pub fn first_observation(&self, setting: Setting, observation: &str, info: &serde_json::Value, hint: Option<&str>) -> Result<String> {
        let tools: Vec<String> = info.get("tools").and_then(|t| t.as_array()).map(|t| t.iter().map(|x| x.to_string()).collect()).unwrap_or_default();
        self.render(FIRST_OBSERVATION, minijinja::context! { observation => observation, hint => hint, setting => setting.as_str(), tools => tools })
    }
}

/// What the chat template writes around turns, learnt once from dummy conversations.
#[derive(Debug, Clone)]
pub struct TurnFormat {
    /// Text the template puts after an assistant message's content (e.g. `<|im_end|>\n`).
    pub assistant_tail: String,
    /// Text the template writes for a user message `X` following an assistant message, with the
    /// assistant's turn opened again: `before + X + after`.
    pub user_before: String,
    pub user_after: String,
    /// Around a tool result (`tool` message), for templates with their own tool format.
    pub tool: Option<(String, String)>,
}

const PROBE_SYS: &str = "\u{2}system\u{2}";
const PROBE_USER: &str = "\u{2}user\u{2}";
const PROBE_ASSISTANT: &str = "\u{2}assistant\u{2}";
const PROBE_OBS: &str = "\u{2}observation\u{2}";

/// What `next` (the conversation `closed` plus one message of content [`PROBE_OBS`]) writes
/// before and after that content; the error says why it cannot be appended as a segment.
fn around(closed: &str, next: &str) -> std::result::Result<(String, String), &'static str> {
    let seg = next.strip_prefix(closed).ok_or("a message changes the conversation before it")?;
    let (before, after) = seg.split_once(PROBE_OBS).ok_or("a message's content is not written as is")?;
    Ok((before.to_string(), after.to_string()))
}

impl TurnFormat {
    pub fn learn(chat: &ChatTemplate) -> Result<TurnFormat> {
        let bad = |m: &str| Error::Chat(format!("cannot append turns with this chat template: {m}"));
        let render = |m: &[Message], gen: bool| chat.render(m, gen).map_err(|e| Error::Chat(e.to_string()));
        let (s, u, a, o) = (Message::system(PROBE_SYS), Message::user(PROBE_USER), Message::assistant(PROBE_ASSISTANT), Message::user(PROBE_OBS));
        let opened = render(&[s.clone(), u.clone()], true)?;
        let closed = render(&[s.clone(), u.clone(), a.clone()], false)?;
        let rest = closed.strip_prefix(opened.as_str()).ok_or_else(|| bad("an assistant message changes the prompt before it"))?;
        let assistant_tail = rest
            .strip_prefix(PROBE_ASSISTANT)
            .ok_or_else(|| bad("the assistant's content is not written right after the generation prompt"))?
            .to_string();
        let next = render(&[s, u, a, o], true)?;
        let (user_before, user_after) = around(&closed, &next).map_err(|m| bad(&format!("user turn: {m}")))?;
        // A template with its own tool format: what it writes around a tool result (None when the
        // tool message cannot be appended as a segment: the user format is used then).
        let tool = chat.supports_tools().then(|| -> Option<(String, String)> {
            let tools = serde_json::json!([{"type": "function", "function": {"name": "probe", "description": "", "parameters": {"type": "object", "properties": {}}}}]);
            let r = |m: &[Message], gen: bool| chat.render_with_tools(m, Some(&tools), gen).ok();
            let (s, u, a) = (Message::system(PROBE_SYS), Message::user(PROBE_USER), Message::assistant(PROBE_ASSISTANT));
            let closed = r(&[s.clone(), u.clone(), a.clone()], false)?;
            let next = r(&[s, u, a, Message::tool(PROBE_OBS)], true)?;
            around(&closed, &next).ok()
        });
        Ok(TurnFormat { assistant_tail, user_before, user_after, tool: tool.flatten() })
    }

    /// The assistant's tail, less the end-of-turn token the model sampled itself (`eos_text`, its
    /// decoded text, when the reply ended with one).
    fn tail(&self, eos_text: Option<&str>) -> &str {
        match eos_text {
            Some(e) if !e.is_empty() => self.assistant_tail.strip_prefix(e).unwrap_or(&self.assistant_tail),
            _ => &self.assistant_tail,
        }
    }

    /// [`TurnFormat::observation_segment`] for a tool's result: the template's own tool turn when
    /// it has one, else a user turn.
    pub fn tool_segment(&self, eos_text: Option<&str>, result: &str) -> String {
        match &self.tool {
            Some((before, after)) => format!("{}{before}{result}{after}", self.tail(eos_text)),
            None => self.observation_segment(eos_text, result),
        }
    }

    /// The text to append after the model's reply so that the sequence continues with the
    /// observation and a new assistant turn: the assistant's [tail](TurnFormat::tail), then the
    /// user turn.
    pub fn observation_segment(&self, eos_text: Option<&str>, observation: &str) -> String {
        format!("{}{}{observation}{}", self.tail(eos_text), self.user_before, self.user_after)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hint_only_when_given() {
        let t = Templates::default();
        let with = t.first_observation(Setting::Games, "OBS", &serde_json::Value::Null, Some("HINT")).unwrap();
        let without = t.first_observation(Setting::Games, "OBS", &serde_json::Value::Null, None).unwrap();
        let info = serde_json::json!({"tools": [{"name": "lookup", "parameters": {"type": "object"}}]});
        let tools = t.first_observation(Setting::ToolUse, "OBS", &info, None).unwrap();
        assert!(tools.starts_with("OBS\n\nTools") && tools.contains(r#"{"name":"lookup","parameters":{"type":"object"}}"#), "{tools}");
        assert_eq!(with.matches("HINT").count(), 1);
        assert!(with.starts_with("OBS"));
        assert_eq!(without, "OBS");
        assert!(t.system(Setting::ToolUse).unwrap().contains("JSON"));
        assert!(t.system(Setting::Games).unwrap().contains("\\boxed{"));
    }

    #[test]
    fn chatml_turn_format() {
        let chat = ChatTemplate::new(spade_model::chat::CHATML, None, None).unwrap();
        let f = TurnFormat::learn(&chat).unwrap();
        assert_eq!(f.assistant_tail, "<|im_end|>\n");
        assert_eq!(f.user_before, "<|im_start|>user\n");
        assert_eq!(f.user_after, "<|im_end|>\n<|im_start|>assistant\n");
        assert_eq!(f.observation_segment(Some("<|im_end|>"), "O"), "\n<|im_start|>user\nO<|im_end|>\n<|im_start|>assistant\n");
        assert_eq!(f.observation_segment(None, "O"), "<|im_end|>\n<|im_start|>user\nO<|im_end|>\n<|im_start|>assistant\n");
    }
}
