//! Parsing a designer response into code, hint and skill tags, tolerant of what small models
//! write: the first fenced Python block (an unclosed final block runs to the end of the text), a
//! bare module when there is no fence at all, the hint and skills either as header comments of the
//! code (`# hint: …`, `# skill: …`, the seed environments' format) or as `Hint:` / `Skill:` lines
//! outside the code.

use crate::memory::header;

/// What a response parsed into.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Parsed {
    /// Environment code (null when unparseable).
    pub code: Option<String>,
    pub hint: Option<String>,
    pub skill_tags: Vec<String>,
    /// Why there is no code; `None` when the response parsed.
    pub error: Option<String>,
}

struct Block {
    lang: String,
    body: String,
    closed: bool,
}

fn fence_of(line: &str) -> Option<&str> {
    let t = line.trim_start();
    t.strip_prefix("```").map(|rest| rest.trim())
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut cur: Option<Block> = None;
    for line in text.lines() {
        match (&mut cur, fence_of(line)) {
            (None, Some(lang)) => {
                cur = Some(Block { lang: lang.to_ascii_lowercase(), body: String::new(), closed: false });
            }
            (Some(b), Some(rest)) if rest.is_empty() || !rest.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_') => {
                b.closed = true;
                out.push(cur.take().expect("open block"));
            }
            (Some(b), Some(_)) => {
                // "```python" while a block is open: the model re-opened; close and start anew.
                b.closed = true;
                out.push(cur.take().expect("open block"));
                cur = Some(Block { lang: fence_of(line).unwrap_or("").to_ascii_lowercase(), body: String::new(), closed: false });
            }
            (Some(b), None) => {
                b.body.push_str(line);
                b.body.push('\n');
            }
            (None, None) => {}
        }
    }
    if let Some(b) = cur {
        out.push(b);
    }
    out
}

fn defines_solve(code: &str) -> bool {
    code.lines().any(|l| l.starts_with("def solve("))
}

fn looks_like_env(code: &str) -> bool {
    code.lines().any(|l| l.trim_start().starts_with("class ")) && code.contains("def ")
}

/// `Key: value` on a line of its own (markdown emphasis and list marks tolerated).
fn labelled_line(text: &str, keys: &[&str]) -> Option<String> {
    for line in text.lines() {
        let t = line.trim().trim_start_matches(['-', '*', '#', '>', ' ']).trim();
        let Some((k, v)) = t.split_once(':') else { continue };
        let k = k.trim().trim_matches('*').trim();
        if keys.iter().any(|key| k.eq_ignore_ascii_case(key)) {
            let v = v.trim().trim_matches('*').trim().trim_matches('"').trim();
            if !v.is_empty() {
                return Some(v.to_string());
            }
        }
    }
    None
}

fn tags(s: &str) -> Vec<String> {
    s.split([',', ';', '/'])
        .map(|t| t.trim().trim_matches(['`', '"', '\'', '.', '*']).trim().to_ascii_lowercase().replace([' ', '_'], "-"))
        .filter(|t| !t.is_empty() && t.len() <= 40)
        .collect()
}

/// Parses one designer response.
pub fn parse_response(text: &str) -> Parsed {
    let bs = blocks(text);
    let pythonish = |b: &&Block| matches!(b.lang.as_str(), "python" | "py" | "python3");
    let chosen = bs
        .iter()
        .find(|b| pythonish(b) && looks_like_env(&b.body))
        .or_else(|| bs.iter().find(|b| looks_like_env(&b.body)))
        .or_else(|| bs.iter().find(pythonish));
    // Text outside the chosen block, where `Hint:` / `Skill:` lines may be.
    let (code, outside): (Option<String>, String) = match chosen {
        Some(b) => (Some(b.body.clone()), text.replacen(&b.body, "", 1)),
        None if bs.is_empty() => {
            // No fence at all: a bare module from its first import/class/header line.
            let lines: Vec<&str> = text.lines().collect();
            let start = lines.iter().position(|l| {
                let t = l.trim_start();
                t.starts_with("import ") || t.starts_with("from ") || t.starts_with("class ") || t.starts_with("# skill:")
            });
            match start {
                Some(s) if looks_like_env(&lines[s..].join("\n")) => (Some(lines[s..].join("\n") + "\n"), lines[..s].join("\n")),
                _ => (None, text.to_string()),
            }
        }
        None => (None, text.to_string()),
    };
    let mut p = Parsed::default();
    let code = code.map(|c| {
        let trimmed = c.trim_end().to_string();
        // drop leading blank lines
        let start = trimmed.find(|ch: char| ch != '\n' && ch != '\r').unwrap_or(0);
        format!("{}\n", &trimmed[start..])
    });
    match &code {
        None => {
            p.error = Some(if bs.is_empty() { "no code block (expected a ```python fenced block)".into() } else { "no Python code block".into() });
        }
        Some(c) if c.trim().is_empty() => p.error = Some("empty code block".into()),
        Some(c) if !looks_like_env(c) => p.error = Some("the code block defines no class with methods".into()),
        Some(_) => {}
    }
    if p.error.is_none() {
        // A reference solver written as a block of its own goes after the environment, behind the
        // marker line that spade-validate splits at (spade_sandbox::validate::SOLVER_MARKER).
        let solver = bs.iter().filter(|b| !chosen.is_some_and(|c| std::ptr::eq(*b, c))).find(|b| defines_solve(&b.body));
        p.code = match (&code, solver) {
            (Some(c), Some(b)) if !c.lines().any(|l| l.trim() == spade_sandbox::validate::SOLVER_MARKER) => {
                Some(format!("{c}\n{}\n{}\n", spade_sandbox::validate::SOLVER_MARKER, b.body.trim_end()))
            }
            _ => code.clone(),
        };
    }
    let code_ref = code.as_deref().unwrap_or("");
    p.hint = header(code_ref, "hint")
        .or_else(|| labelled_line(&outside, &["hint", "privileged hint", "strategy hint"]))
        .filter(|h| !(h.starts_with('<') && h.ends_with('>')));
    p.skill_tags = header(code_ref, "skill")
        .or_else(|| header(code_ref, "skills"))
        .or_else(|| labelled_line(&outside, &["skill", "skills", "skill tags"]))
        .map(|s| tags(&s))
        .unwrap_or_default();
    p
}

/// The hint of a `--hint self` response: the `Hint:` line (and what follows it on the same
/// paragraph), else the whole text; quotes and emphasis trimmed, at most 600 characters. `None`
/// when empty.
pub fn parse_hint(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let body = match lower.find("hint:") {
        Some(i) => &text[i + "hint:".len()..],
        None => text,
    };
    let para = body.trim().split("\n\n").next().unwrap_or("");
    let h = para.split_whitespace().collect::<Vec<_>>().join(" ");
    let h = h.trim_matches(|c: char| c == '*' || c == '"' || c.is_whitespace()).to_string();
    if h.is_empty() {
        return None;
    }
    Some(if h.chars().count() > 600 { h.chars().take(600).collect() } else { h })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_solver_block_follows_the_environment_behind_the_marker() {
        let env = "class E:\n    def reset(self, seed=None):\n        return 'x', {}\n";
        let p = super::parse_response(&format!("```python\n{env}```\nAnd a solver:\n```python\ndef solve(observations):\n    return 'a'\n```\n"));
        let (code, solver) = spade_sandbox::validate::split_solver(p.code.as_deref().unwrap());
        assert_eq!(code, env);
        assert_eq!(solver.as_deref(), Some("def solve(observations):\n    return 'a'\n"));
        // No solver block: the code as it was.
        assert_eq!(super::parse_response(&format!("```python\n{env}```")).code.as_deref(), Some(env));
    }

    #[test]
    fn hint_responses() {
        assert_eq!(parse_hint("Sure!\n**Hint:** halve the range\neach time.\n\nGood luck").as_deref(), Some("halve the range each time."));
        assert_eq!(parse_hint("  Work backwards.  ").as_deref(), Some("Work backwards."));
        assert_eq!(parse_hint("Hint:   "), None);
    }

    use super::*;

    const ENV: &str = "class GuessEnv:\n    def reset(self, seed=None):\n        return 'go', {}\n    def step(self, action):\n        return 'done', 1.0, True, False, {}\n";

    #[test]
    fn fenced_block_with_header_comments() {
        let text = format!("Here you go.\n```python\n# skill: Logical Deduction, math\n# setting: games\n# hint: halve the range\n{ENV}```\nEnjoy!");
        let p = parse_response(&text);
        assert_eq!(p.error, None);
        assert!(p.code.as_deref().unwrap().starts_with("# skill: Logical Deduction"));
        assert!(p.code.as_deref().unwrap().ends_with("{}\n"));
        assert_eq!(p.hint.as_deref(), Some("halve the range"));
        assert_eq!(p.skill_tags, ["logical-deduction", "math"]);
    }

    #[test]
    fn placeholder_hints_are_dropped() {
        let p = parse_response(&format!("```python\n# hint: <one or two sentences>\n{ENV}```"));
        assert_eq!((p.error, p.hint), (None, None));
    }

    #[test]
    fn unclosed_final_block_and_outside_hint() {
        let text = format!("**Hint:** try the middle\nSkill: optimisation\n```py\n{ENV}");
        let p = parse_response(&text);
        assert_eq!(p.error, None, "{p:?}");
        assert_eq!(p.code.as_deref(), Some(ENV));
        assert_eq!(p.hint.as_deref(), Some("try the middle"));
        assert_eq!(p.skill_tags, ["optimisation"]);
    }

    #[test]
    fn first_env_block_wins_over_other_blocks() {
        let text = format!("```text\nobs\n```\n```python\nprint(1)\n```\n```python\n{ENV}```\n```python\nclass Other:\n  def x(self): pass\n```");
        let p = parse_response(&text);
        assert_eq!(p.code.as_deref(), Some(ENV));
    }

    #[test]
    fn bare_module_without_fence() {
        let text = format!("Sure.\nimport random\n{ENV}");
        let p = parse_response(&text);
        assert_eq!(p.error, None);
        assert!(p.code.unwrap().starts_with("import random\nclass GuessEnv"));
    }

    #[test]
    fn unparseable_responses_say_why() {
        for (t, why) in [
            ("I cannot do that.", "no code block"),
            ("```python\nprint('hi')\n```", "defines no class"),
            ("```python\n\n```", "empty code block"),
            ("```bash\nls\n```", "no Python code block"),
            ("", "no code block"),
        ] {
            let p = parse_response(t);
            assert!(p.code.is_none(), "{t}");
            assert!(p.error.as_deref().unwrap().contains(why), "{t}: {:?}", p.error);
        }
    }

    #[test]
    fn reopened_fence_closes_the_previous_block() {
        let text = format!("```python\n{ENV}```python\nclass B:\n  def f(self): pass\n");
        let p = parse_response(&text);
        assert_eq!(p.code.as_deref(), Some(ENV));
    }
}
