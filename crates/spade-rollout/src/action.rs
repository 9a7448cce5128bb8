//! From the model's reply to the environment's action.
//!
//! Games: the content of the last `\boxed{…}` (braces matched), re-wrapped as `\boxed{X}`; a reply
//! without one is passed stripped, as is (the environment answers with a format reminder).
//! Tool-use: the first JSON object with a string `name` (inside code fences, `<tool_call>` tags or
//! prose alike), normalised to `{"name": …, "arguments": {…}}` (`arguments` given as a JSON string
//! is decoded; missing is `{}`); a reply without one is passed stripped, as is.

use serde_json::{json, Map, Value};

use crate::Setting;

/// The action for `setting` extracted from `reply`.
pub fn extract_action(setting: Setting, reply: &str) -> String {
    match setting {
        Setting::Games => boxed(reply).map(|b| format!("\\boxed{{{b}}}")),
        Setting::ToolUse => tool_call(reply).map(|v| call_text(&v)),
    }
    .unwrap_or_else(|| reply.trim().to_string())
}

/// Content of the last `\boxed{…}` with balanced braces.
pub fn boxed(text: &str) -> Option<String> {
    const OPEN: &str = "\\boxed{";
    let mut from = text.len();
    while let Some(pos) = text[..from].rfind(OPEN) {
        let start = pos + OPEN.len();
        let mut depth = 1usize;
        for (i, c) in text[start..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(text[start..start + i].trim().to_string());
                    }
                }
                _ => {}
            }
        }
        from = pos; // unbalanced: try an earlier one
    }
    None
}

/// A normalised call as compact JSON, `name` first.
pub fn call_text(call: &Value) -> String {
    format!("{{\"name\":{},\"arguments\":{}}}", call["name"], call["arguments"])
}

/// The first JSON tool call in `text`, normalised.
pub fn tool_call(text: &str) -> Option<Value> {
    for (pos, _) in text.char_indices().filter(|(_, c)| *c == '{') {
        let mut it = serde_json::Deserializer::from_str(&text[pos..]).into_iter::<Value>();
        let Some(Ok(Value::Object(obj))) = it.next() else { continue };
        if let Some(call) = normalise(obj) {
            return Some(call);
        }
    }
    None
}

fn normalise(mut obj: Map<String, Value>) -> Option<Value> {
    // OpenAI style {"function": {"name", "arguments"}} or {"type": "function", "function": …}.
    if let Some(Value::Object(f)) = obj.get("function") {
        if f.get("name").is_some_and(Value::is_string) {
            let f = f.clone();
            return normalise(f);
        }
    }
    let name = match obj.remove("name").or_else(|| obj.remove("tool")) {
        Some(Value::String(s)) if !s.trim().is_empty() => s,
        _ => return None,
    };
    let args = match obj.remove("arguments").or_else(|| obj.remove("parameters")).or_else(|| obj.remove("args")) {
        None | Some(Value::Null) => json!({}),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(&s) {
            Ok(v @ Value::Object(_)) => v,
            _ => Value::String(s),
        },
        Some(v) => v,
    };
    Some(json!({"name": name, "arguments": args}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn games_take_the_last_balanced_box() {
        assert_eq!(extract_action(Setting::Games, "I think \\boxed{3} no, \\boxed{ 4 }."), "\\boxed{4}");
        assert_eq!(extract_action(Setting::Games, "\\boxed{\\frac{1}{2}}"), "\\boxed{\\frac{1}{2}}");
        assert_eq!(extract_action(Setting::Games, "\\boxed{5} then \\boxed{6"), "\\boxed{5}");
        assert_eq!(extract_action(Setting::Games, "  just 7 \n"), "just 7");
    }

    #[test]
    fn tool_calls_are_found_and_normalised() {
        let r = "Let me look.\n```json\n{\"name\": \"get_price\", \"arguments\": {\"item\": \"glue\"}}\n```";
        assert_eq!(extract_action(Setting::ToolUse, r), r#"{"name":"get_price","arguments":{"item":"glue"}}"#);
        let r = "<tool_call>{\"function\": {\"name\": \"get_order\", \"arguments\": \"{}\"}}</tool_call>";
        assert_eq!(tool_call(r).unwrap(), json!({"name": "get_order", "arguments": {}}));
        // A set-like brace or an object without a name is skipped.
        let r = "{x} {\"a\": 1} then {\"name\": \"submit_total\", \"arguments\": {\"total\": 12}}";
        assert_eq!(tool_call(r).unwrap()["arguments"]["total"], 12);
        assert_eq!(extract_action(Setting::ToolUse, " no call "), "no call");
    }
}
