//! Chat templates from the model files, rendered with minijinja (a real Jinja engine) set up
//! like Hugging Face's: `trim_blocks`, `lstrip_blocks`, `raise_exception`, `strftime_now`,
//! Python string methods (`.strip()`, `.startswith()` …) through minijinja-contrib's pycompat.

use serde::{Deserialize, Serialize};

use crate::error::Result;

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: String,
    pub content: String,
}

impl Message {
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        Message { role: role.into(), content: content.into() }
    }
    pub fn system(content: impl Into<String>) -> Self {
        Self::new("system", content)
    }
    /// A tool's result (role `tool`), for templates with a tool format.
    pub fn tool(content: impl Into<String>) -> Self {
        Self::new("tool", content)
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self::new("user", content)
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new("assistant", content)
    }
}

/// A compiled chat template with the model's BOS/EOS strings.
#[derive(Clone)]
pub struct ChatTemplate {
    source: String,
    bos: String,
    eos: String,
    env: minijinja::Environment<'static>,
}

/// ChatML, used when a model ships no template.
pub const CHATML: &str = "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

impl ChatTemplate {
    /// Compile a template; fails on a syntax error.
    pub fn new(source: &str, bos: Option<&str>, eos: Option<&str>) -> Result<Self> {
        let mut env = minijinja::Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", |msg: String| -> Result<String, minijinja::Error> {
            Err(minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, msg))
        });
        // Deterministic on purpose: the same inputs always render the same prompt.
        env.add_function("strftime_now", |_fmt: String| -> String { "01 Jan 2025".to_string() });
        env.add_template_owned("chat", source.to_string())?;
        Ok(ChatTemplate { source: source.to_string(), bos: bos.unwrap_or_default().to_string(), eos: eos.unwrap_or_default().to_string(), env })
    }

    /// The template's Jinja source.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Render messages; `add_generation_prompt` opens the assistant's turn.
    pub fn render(&self, messages: &[Message], add_generation_prompt: bool) -> Result<String> {
        self.render_with_tools(messages, None, add_generation_prompt)
    }

    /// Whether the template has its own tool format (it reads a `tools` variable, as Qwen2.5's and
    /// Llama 3.1's do); SmolLM2's and ChatML have none.
    pub fn supports_tools(&self) -> bool {
        self.source.contains("tools")
    }

    /// Render with `tools` (a list of tool schemas, as the template expects them) given to the
    /// template; messages of role `tool` are tool results.
    pub fn render_with_tools(&self, messages: &[Message], tools: Option<&serde_json::Value>, add_generation_prompt: bool) -> Result<String> {
        let tmpl = self.env.get_template("chat")?;
        Ok(tmpl.render(minijinja::context! {
            messages => messages,
            tools => tools.map(minijinja::Value::from_serialize),
            add_generation_prompt => add_generation_prompt,
            bos_token => self.bos,
            eos_token => self.eos,
        })?)
    }
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate").field("source", &self.source).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chatml_renders() {
        let t = ChatTemplate::new(CHATML, None, None).unwrap();
        let s = t.render(&[Message::system("S"), Message::user("hi")], true).unwrap();
        assert_eq!(s, "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
    }

    #[test]
    fn hf_features_work() {
        // raise_exception, python string methods, namespace, loop.last, trim/lstrip blocks.
        let src = "{% if messages[0]['role'] != 'system' %}{{ raise_exception('need system') }}{% endif %}\n\
                   {% set ns = namespace(n=0) %}\n\
                   {% for m in messages %}\n  {% set ns.n = ns.n + 1 %}\n  [{{ m['content'].strip().upper() }}]{% if m.content.startswith(' ') %}!{% endif %}{% if loop.last %}.{% endif %}\n{% endfor %}\n{{ bos_token }}{{ ns.n }}";
        let t = ChatTemplate::new(src, Some("<s>"), Some("</s>")).unwrap();
        let s = t.render(&[Message::system(" a "), Message::user("b")], false).unwrap();
        assert_eq!(s, "  [A]!  [B].<s>2");
        let err = t.render(&[Message::user("b")], false).unwrap_err();
        assert!(err.to_string().contains("need system"), "{err}");
    }
}
