//! spade-rollout: episodes in both arms with a tiny model and hand-written environments
//! (`tests/data/rollout/*.py`), kept as tokens end to end; a scripted agent for the tool-use path.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use spade_model::{Message, Model, TinySpec};
use spade_rollout::{play, Arm, EnvSpec, EpisodeSpec, PlayConfig, ScriptedPolicy, Setting};
use spade_sandbox::{Sandbox, SandboxConfig};

use crate::util::{read_jsonl, root, stage, tmp, write_jsonl};

fn data(name: &str) -> String {
    std::fs::read_to_string(root().join("tests/data/rollout").join(name)).unwrap()
}

fn header(code: &str, key: &str) -> Option<String> {
    code.lines().take_while(|l| l.starts_with('#')).find_map(|l| {
        let (k, v) = l.trim_start_matches('#').trim().split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

fn env_row(name: &str) -> Value {
    let code = data(name);
    json!({
        "env_id": spade_sandbox::validate::env_id(&code),
        "code": code,
        "hint": header(&code, "hint"),
        "skill": header(&code, "skill"),
        "setting": header(&code, "setting"),
    })
}

fn tiny(dir: &Path) -> (PathBuf, Model) {
    let m = dir.join("tiny");
    spade_model::write_tiny_model(&m, 7, TinySpec::default()).unwrap();
    let model = spade_model::load(&m, &spade_model::candle_core::Device::Cpu).unwrap();
    (m, model)
}

fn rollout(model: &Path, envs: &Path, out: &Path, extra: &[&str]) -> Vec<Value> {
    let mut c = stage("spade-rollout");
    c.arg("--model").arg(model).arg("--envs").arg(envs).arg("-o").arg(out);
    c.args(["--group", "2", "--max-turns", "3", "--max-new-tokens", "12", "--threads", "1", "--progress", "off"]);
    c.args(extra);
    c.assert().success();
    read_jsonl(out)
}

fn u32s(v: &Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

/// Runs of consecutive positions with mask 1, as token slices.
fn agent_runs(tokens: &[u32], mask: &[u8]) -> Vec<Vec<u32>> {
    let mut runs = Vec::new();
    let mut cur = Vec::new();
    for (&t, &m) in tokens.iter().zip(mask) {
        if m == 1 {
            cur.push(t);
        } else if !cur.is_empty() {
            runs.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        runs.push(cur);
    }
    runs
}

#[test]
fn episodes_are_tokens_with_an_exact_mask_and_the_hint_only_in_its_arm() {
    let dir = tmp();
    let (mpath, model) = tiny(dir.path());
    let envs = dir.path().join("envs.jsonl");
    write_jsonl(&envs, &[env_row("guess.py"), env_row("crash.py")]);
    let out = dir.path().join("rollouts.jsonl");
    let rows = rollout(&mpath, &envs, &out, &["--round", "3", "--step", "1"]);
    assert_eq!(rows.len(), 2 * 2 * 2, "2 environments x 2 arms x G=2");
    let tok = model.tokenizer();
    let crash_id = env_row("crash.py")["env_id"].clone();
    let hints = ["HINT-MARKER-GUESS", "HINT-MARKER-CRASH"];
    for r in &rows {
        let tokens = u32s(&r["token_ids"]);
        let mask: Vec<u8> = r["loss_mask"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u8).collect();
        let lps: Vec<f64> = r["logprobs"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        assert_eq!((tokens.len(), mask.len()), (lps.len(), lps.len()));
        for i in 0..tokens.len() {
            if mask[i] == 0 {
                assert_eq!(lps[i], 0.0, "log-prob outside the mask");
            } else {
                assert!(lps[i] <= 0.0 && lps[i].is_finite());
            }
        }
        assert_eq!((r["round"].as_i64(), r["step"].as_i64(), r["policy_version"].as_i64()), (Some(3), Some(1), Some(0)));
        assert!(r["seed"].as_i64().unwrap() >= 0);
        let transcript: Value = serde_json::from_str(r["transcript"].as_str().unwrap()).unwrap();
        let messages: Vec<Message> = serde_json::from_value(transcript["messages"].clone()).unwrap();
        let assistant: Vec<&Message> = messages.iter().filter(|m| m.role == "assistant").collect();
        assert_eq!(assistant.len() as i64, r["turns"].as_i64().unwrap());

        // The mask covers exactly the agent's replies: each run of 1s decodes to one reply (plus
        // its end-of-turn token when it ended with one).
        let runs = agent_runs(&tokens, &mask);
        assert_eq!(runs.len(), assistant.len());
        for (run, m) in runs.iter().zip(&assistant) {
            let text = tok.decode(run, false).unwrap();
            assert!(text == m.content || text == format!("{}<|im_end|>", m.content), "{text:?} vs {:?}", m.content);
        }
        // The stored tokens decode to the transcript rendered by the chat template (what
        // follows the last reply is the template's tail, not in the sequence).
        let decoded = tok.decode(&tokens, false).unwrap();
        let rendered = model.render_chat(&messages, false).unwrap();
        let tail =
            rendered.strip_prefix(decoded.as_str()).unwrap_or_else(|| panic!("tokens do not decode to the transcript:\n{decoded:?}\n{rendered:?}"));
        assert!(tail == "\n" || tail == "<|im_end|>\n", "{tail:?}");

        // The hint reaches the model only in the hint arm, exactly once, in the first observation.
        let prompt_only: Vec<u32> = tokens.iter().zip(&mask).filter(|(_, &m)| m == 0).map(|(&t, _)| t).collect();
        let seen = tok.decode(&prompt_only, false).unwrap();
        let mine = if r["env_id"] == crash_id { hints[1] } else { hints[0] };
        let expect = if r["arm"] == "hint" { 1 } else { 0 };
        assert_eq!(seen.matches(mine).count(), expect, "arm {}", r["arm"]);
        if expect == 1 {
            assert!(messages[1].content.contains(mine));
            assert!(messages[2..].iter().all(|m| !m.content.contains(mine)));
        }

        // A crash mid-episode costs only that episode.
        if r["env_id"] == crash_id {
            assert_eq!((r["status"].as_str(), r["termination"].as_str()), (Some("exception"), Some("env_error")));
            assert_eq!(r["turns"], 2);
            assert_eq!(r["raw_return"], 0.25);
            assert!(transcript["error"].as_str().unwrap().contains("broken on purpose"));
        } else {
            assert_eq!(r["status"], "ok");
            let t = r["termination"].as_str().unwrap();
            assert!(["terminated", "truncated"].contains(&t), "{t}");
            let ret = r["return"].as_f64().unwrap();
            assert_eq!(r["success"].as_bool().unwrap(), ret == 1.0);
        }
    }
}

#[test]
fn a_seed_replays_the_same_episodes() {
    let dir = tmp();
    let (mpath, _) = tiny(dir.path());
    let envs = dir.path().join("envs.jsonl");
    write_jsonl(&envs, &[env_row("guess.py"), env_row("guess2.py")]);
    let a = rollout(&mpath, &envs, &dir.path().join("a.jsonl"), &["--seed", "5"]);
    let b = rollout(&mpath, &envs, &dir.path().join("b.jsonl"), &["--seed", "5"]);
    assert_eq!(a, b);
    let c = rollout(&mpath, &envs, &dir.path().join("c.jsonl"), &["--seed", "6"]);
    assert_ne!(a.iter().map(|r| r["seed"].clone()).collect::<Vec<_>>(), c.iter().map(|r| r["seed"].clone()).collect::<Vec<_>>());
    // Seeds do not depend on the batch: one arm alone gives the same seeds.
    let d = rollout(&mpath, &envs, &dir.path().join("d.jsonl"), &["--seed", "5", "--arms", "nohint"]);
    let nohint: Vec<&Value> = a.iter().filter(|r| r["arm"] == "nohint").collect();
    assert_eq!(d.iter().map(|r| &r["seed"]).collect::<Vec<_>>(), nohint.iter().map(|r| &r["seed"]).collect::<Vec<_>>());
}

#[test]
fn shards_together_equal_one_run() {
    let dir = tmp();
    let (mpath, _) = tiny(dir.path());
    let envs = dir.path().join("envs.jsonl");
    let rows: Vec<Value> = ["guess.py", "guess2.py", "guess3.py", "crash.py"].iter().map(|n| env_row(n)).collect();
    write_jsonl(&envs, &rows);
    let key = |r: &Value| (r["env_id"].as_str().unwrap().to_string(), r["arm"].as_str().unwrap().to_string(), r["episode"].as_i64().unwrap());
    let sorted = |v: Vec<Value>| v.into_iter().map(|r| (key(&r), r)).collect::<BTreeMap<_, _>>();
    let t0 = ["--temperature", "0"];
    let whole = sorted(rollout(&mpath, &envs, &dir.path().join("all.jsonl"), &t0));
    let s0 = rollout(&mpath, &envs, &dir.path().join("s0.jsonl"), &["--temperature", "0", "--shard", "0/2"]);
    let s1 = rollout(&mpath, &envs, &dir.path().join("s1.jsonl"), &["--temperature", "0", "--shard", "1/2"]);
    assert!(!s0.is_empty() && !s1.is_empty(), "both shards play something");
    let mut parts = sorted(s0);
    parts.extend(sorted(s1));
    assert_eq!(parts.len(), whole.len(), "shards are disjoint and cover the run");
    for (k, w) in &whole {
        let p = &parts[k];
        // Everything equal; log-probs up to float noise (batch-mates change the padding of the
        // matrix products, hence the rounding of their sums).
        let diff: Vec<&String> = w.as_object().unwrap().keys().filter(|f| *f != "logprobs" && p[f.as_str()] != w[f.as_str()]).collect();
        assert!(diff.is_empty(), "{k:?} differs in {diff:?}");
        let (a, b) = (w["logprobs"].as_array().unwrap(), p["logprobs"].as_array().unwrap());
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!((x - y).abs() <= 1e-3 * (1.0 + x.abs()), "{k:?}: log-prob {x} vs {y}");
            assert_eq!(x == 0.0, y == 0.0);
        }
    }
}

#[test]
fn pool_from_memory_skips_bad_labels_and_errors_are_one_line() {
    let dir = tmp();
    let (mpath, _) = tiny(dir.path());
    let mem = dir.path().join("memory.jsonl");
    let mut rows = Vec::new();
    for (name, last, label) in [("guess.py", 1, "seed"), ("guess2.py", 2, "too-easy"), ("guess3.py", 0, "none"), ("crash.py", 5, "failing")] {
        let mut r = env_row(name);
        r["last_round"] = json!(last);
        r["label"] = json!(label);
        rows.push(r);
    }
    write_jsonl(&mem, &rows);
    let played = |draw: &str, seed: &str| {
        let out = dir.path().join(format!("r-{draw}-{seed}.jsonl"));
        let mut c = stage("spade-rollout");
        c.arg("--model").arg(&mpath).arg("--memory").arg(&mem).arg("-o").arg(&out).args(["--pool-draw", draw, "--seed", seed]);
        c.args(["--pool", "1", "--group", "1", "--arms", "nohint", "--max-turns", "1", "--max-new-tokens", "4", "--progress", "off"]);
        c.assert().success();
        let got = read_jsonl(&out);
        assert_eq!(got.len(), 1);
        got[0]["env_id"].as_str().unwrap().to_string()
    };
    assert_eq!(played("recent", "0"), rows[0]["env_id"], "most recent playable memory environment");
    // The default draw: a playable environment (never too-easy or failing), seeded, both come up.
    let drawn: Vec<String> = (0..8).map(|s| played("weighted", &s.to_string())).collect();
    assert!(drawn.iter().all(|e| e == &rows[0]["env_id"] || e == &rows[2]["env_id"]), "{drawn:?}");
    assert!(
        drawn.contains(&rows[2]["env_id"].as_str().unwrap().to_string()) && drawn.contains(&rows[0]["env_id"].as_str().unwrap().to_string()),
        "{drawn:?}"
    );
    assert_eq!(played("weighted", "3"), drawn[3], "same seed, same draw");

    // Bad input: one line, exit 2, no output.
    let bad = dir.path().join("bad.jsonl");
    write_jsonl(&bad, &[json!({"env_id": "x"})]);
    let out2 = dir.path().join("r2.jsonl");
    let a = stage("spade-rollout").arg("--model").arg(&mpath).arg("--envs").arg(&bad).arg("-o").arg(&out2).assert().code(2);
    let err = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(err.contains("code"), "{err}");
    assert!(!out2.exists());
    stage("spade-rollout").arg("--model").arg(&mpath).arg("--envs").arg(&bad).arg("-o").arg(&out2).args(["--arms", "both"]).assert().code(2);
}

fn sandbox() -> Sandbox {
    Sandbox::new(SandboxConfig { jobs: 1, worker: Some(crate::util::worker()), ..Default::default() }).unwrap()
}

fn spec_of(row: &Value) -> EnvSpec {
    EnvSpec {
        env_id: row["env_id"].as_str().unwrap().into(),
        code: row["code"].as_str().unwrap().into(),
        hint: row["hint"].as_str().map(String::from),
        skill: None,
        setting: Setting::parse(row["setting"].as_str()),
        origin: "new",
    }
}

#[test]
fn tool_use_parses_json_calls_and_feeds_the_environment() {
    let dir = tmp();
    let (_, model) = tiny(dir.path());
    let env = spec_of(&env_row("secret_tool.py"));
    assert_eq!(env.setting, Setting::ToolUse);
    // A scripted agent: asks for the secret, then submits what the last observation said.
    let agent = ScriptedPolicy::new(&model, |prompt: &str| match prompt.rfind("The secret is ") {
        Some(i) => {
            let code = &prompt[i + 14..i + 18];
            format!("I have it.\n```json\n{{\"name\": \"submit\", \"arguments\": {{\"code\": \"{code}\"}}}}\n```")
        }
        None => "First the secret: <tool_call>{\"name\": \"get_secret\", \"arguments\": {}}</tool_call>".to_string(),
    });
    let specs: Vec<EpisodeSpec> = (0..3).map(|k| EpisodeSpec { env: 0, arm: Arm::NoHint, episode: k, seed: 100 + k as u64 }).collect();
    let cfg = PlayConfig { max_turns: 4, max_new_tokens: 256, ..Default::default() };
    let (out, stats) = play(&[env], &specs, &agent, &sandbox(), &cfg, &mut |_| {}).unwrap();
    assert_eq!(stats.episodes, 3);
    for o in &out {
        assert_eq!((o.status.as_str(), o.termination.as_str(), o.turns), ("ok", "terminated", 2), "{}", o.transcript);
        assert_eq!((o.ret, o.success), (1.0, true));
        let actions = o.transcript["actions"].as_array().unwrap();
        assert_eq!(actions[0], r#"{"name":"get_secret","arguments":{}}"#);
        assert!(actions[1].as_str().unwrap().starts_with(r#"{"name":"submit","arguments":{"code":""#));
        // Two replies, each ending with the end-of-turn token, masked.
        assert_eq!(o.loss_mask.iter().filter(|&&m| m == 1).count(), o.generated_tokens);
    }
    // The tool list reached the agent in the first observation; the system prompt asks for JSON.
    let prompts = agent.prompts.lock().unwrap();
    assert!(prompts[0].contains("get_secret {}") && prompts[0].contains("JSON"));
}

/// The tool-environment contract end to end: the tools a tool environment declares
/// (`get_tools`, JSON schemas) are listed in the agent's first observation with the reserved
/// `answer`; a JSON call runs `execute_tool` and its result is the next observation; a reply that
/// calls no known tool gets an error observation naming the tools; `answer` goes to `step`.
#[test]
fn a_tool_environment_lists_its_tools_runs_calls_and_ends_on_the_answer() {
    let dir = tmp();
    // A context wide enough for the tool list in byte-level tokens.
    let model = spade_model::load(&crate::util::tiny_model(&dir.path().join("wide"), 7, 8192), &spade_model::candle_core::Device::Cpu).unwrap();
    let code = std::fs::read_to_string(root().join("data/seed-envs-tool-use/currency_chain.py")).unwrap();
    let (code, _) = spade_sandbox::validate::split_solver(&code);
    let env = EnvSpec { env_id: spade_sandbox::validate::env_id(&code), code, hint: None, skill: None, setting: Setting::ToolUse, origin: "new" };
    // A scripted agent: a wrong tool first, then the rate, then the product as the answer.
    let agent = ScriptedPolicy::new(&model, |prompt: &str| {
        let turn = prompt.matches("<|im_start|>assistant").count();
        let first = &prompt[prompt.find("How much is ").unwrap()..];
        let (amount, src, dst) = {
            let w: Vec<&str> = first.split_whitespace().collect();
            (w[3].parse::<f64>().unwrap(), w[4].to_string(), w[6].trim_end_matches('?').to_string())
        };
        match turn {
            1 => r#"{"name": "get_weather", "arguments": {}}"#.to_string(),
            2 => format!(r#"{{"name": "get_rate", "arguments": {{"from": "{src}", "to": "{dst}"}}}}"#),
            _ => {
                let at = prompt.rfind(&format!("1 {src} = ")).unwrap() + format!("1 {src} = ").len();
                let rate: f64 = prompt[at..].split_whitespace().next().unwrap().parse().unwrap();
                format!(r#"So: {{"name": "answer", "arguments": {{"answer": "{:.2}"}}}}"#, amount * rate)
            }
        }
    });
    let specs: Vec<EpisodeSpec> = (0..2).map(|k| EpisodeSpec { env: 0, arm: Arm::NoHint, episode: k, seed: 7 + k as u64 }).collect();
    let cfg = PlayConfig { max_turns: 5, max_new_tokens: 256, ..Default::default() };
    let (out, _) = play(&[env], &specs, &agent, &sandbox(), &cfg, &mut |_| {}).unwrap();
    for o in &out {
        assert_eq!((o.status.as_str(), o.termination.as_str(), o.turns, o.success), ("ok", "terminated", 3, true), "{}", o.transcript);
        // system, first observation, then (reply, observation) pairs.
        let msgs = o.transcript["messages"].as_array().unwrap();
        let obs = |k: usize| msgs[1 + 2 * k]["content"].as_str().unwrap().to_string();
        assert!(obs(1).starts_with("Error: no tool named 'get_weather'"), "{}", obs(1));
        assert!(obs(2).contains(" = "), "the tool's result: {}", obs(2));
    }
    let prompts = agent.prompts.lock().unwrap();
    assert!(
        prompts[0].contains("Tools (call one per turn") && prompts[0].contains(r#""name":"get_rate""#) && prompts[0].contains(r#""name":"answer""#),
        "{}",
        prompts[0]
    );
}

/// A chat template with its own tool format (Qwen2.5's shape): the tools go to the template's
/// `tools` variable instead of the first observation, and a tool's result comes back as a `tool`
/// turn (`<tool_response>`); other observations (an error) stay user turns.
const TOOLS_TEMPLATE: &str = r#"{%- if tools %}<|im_start|>system
{{ messages[0]['content'] }}

# Tools
<tools>
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
</tools>
Call a tool inside <tool_call></tool_call> tags.<|im_end|>
{% else %}<|im_start|>system
{{ messages[0]['content'] }}<|im_end|>
{% endif %}
{%- for message in messages[1:] %}
{%- if message.role == "tool" %}<|im_start|>user
<tool_response>
{{ message.content }}
</tool_response><|im_end|>
{% else %}<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}"#;

#[test]
fn a_template_with_a_tool_format_gets_the_tools_and_tool_turns() {
    let dir = tmp();
    let m = crate::util::tiny_model(&dir.path().join("wide"), 7, 8192);
    std::fs::write(m.join("chat_template.jinja"), TOOLS_TEMPLATE).unwrap();
    let model = spade_model::load(&m, &spade_model::candle_core::Device::Cpu).unwrap();
    assert!(model.chat_template().supports_tools());
    let code = std::fs::read_to_string(root().join("data/seed-envs-tool-use/weather_pick.py")).unwrap();
    let (code, _) = spade_sandbox::validate::split_solver(&code);
    let env = EnvSpec { env_id: spade_sandbox::validate::env_id(&code), code, hint: None, skill: None, setting: Setting::ToolUse, origin: "new" };
    let agent = ScriptedPolicy::new(&model, |prompt: &str| match prompt.matches("<|im_start|>assistant").count() {
        1 => "<tool_call>{\"name\": \"nope\", \"arguments\": {}}</tool_call>".to_string(),
        2 => "<tool_call>{\"name\": \"forecast\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>".to_string(),
        _ => "<tool_call>{\"name\": \"answer\", \"arguments\": {\"answer\": \"Oslo\"}}</tool_call>".to_string(),
    });
    let specs = vec![EpisodeSpec { env: 0, arm: Arm::NoHint, episode: 0, seed: 3 }];
    let cfg = PlayConfig { max_turns: 5, max_new_tokens: 256, ..Default::default() };
    let (out, _) = play(&[env], &specs, &agent, &sandbox(), &cfg, &mut |_| {}).unwrap();
    let o = &out[0];
    assert_eq!((o.status.as_str(), o.termination.as_str(), o.turns), ("ok", "terminated", 3), "{}", o.transcript);
    let prompts = agent.prompts.lock().unwrap();
    assert!(prompts[0].contains("<tools>") && prompts[0].contains(r#""name":"forecast""#), "{}", prompts[0]);
    assert!(!prompts[0].contains("Tools (call one per turn"), "the tools are not listed twice");
    assert!(prompts[1].contains("<|im_start|>user\nError: no tool named 'nope'"), "an error stays a user turn: {}", prompts[1]);
    assert!(
        prompts[2].contains("<tool_response>\n") && prompts[2].ends_with("</tool_response><|im_end|>\n<|im_start|>assistant\n"),
        "{}",
        prompts[2]
    );
    let roles: Vec<&str> = o.transcript["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user", "assistant", "tool", "assistant"]);
}

#[test]
fn games_actions_are_boxed_and_the_hint_arm_sees_the_hint_once() {
    let dir = tmp();
    let (_, model) = tiny(dir.path());
    let env = spec_of(&env_row("guess.py"));
    // Always answers 1..4 in order; the environment wins on the right one.
    let agent = ScriptedPolicy::new(&model, |prompt: &str| {
        let turn = prompt.matches("<|im_start|>assistant").count();
        format!("Let me try \\boxed{{0}} no, \\boxed{{{turn}}}")
    });
    let specs = vec![EpisodeSpec { env: 0, arm: Arm::Hint, episode: 0, seed: 1 }, EpisodeSpec { env: 0, arm: Arm::NoHint, episode: 0, seed: 1 }];
    let cfg = PlayConfig { max_turns: 3, max_new_tokens: 256, ..Default::default() };
    let (out, _) = play(&[env], &specs, &agent, &sandbox(), &cfg, &mut |_| {}).unwrap();
    // Same seed, same scripted replies: both arms play the same game.
    assert_eq!(out[0].transcript["actions"], out[1].transcript["actions"]);
    assert_eq!(out[0].transcript["actions"][0], "\\boxed{1}");
    let prompts = agent.prompts.lock().unwrap();
    let with: usize = prompts.iter().filter(|p| p.contains("HINT-MARKER-GUESS")).count();
    assert!(with >= 1, "the hint arm saw the hint");
    for p in prompts.iter() {
        assert!(p.matches("HINT-MARKER-GUESS").count() <= 1);
    }
}

#[test]
fn the_fixed_pool_draws_fresh_environments_each_round_and_matches_another_run() {
    let dir = tmp();
    let (mpath, _) = tiny(dir.path());
    let mem = dir.path().join("memory.jsonl");
    let mut rows = Vec::new();
    for (name, label) in [("guess.py", "seed"), ("guess2.py", "too-easy"), ("guess3.py", "none"), ("crash.py", "seed")] {
        let mut r = env_row(name);
        r["last_round"] = json!(0);
        r["label"] = json!(label);
        rows.push(r);
    }
    write_jsonl(&mem, &rows);
    let played = |round: &str, extra: &[&str]| -> Vec<String> {
        let out = dir.path().join(format!("r{round}.jsonl"));
        let mut c = stage("spade-rollout");
        c.arg("--model").arg(&mpath).arg("--memory").arg(&mem).arg("-o").arg(&out);
        c.args(["--pool-draw", "draw", "--round", round, "--group", "1", "--arms", "nohint", "--max-turns", "1"]);
        c.args(["--max-new-tokens", "2", "--progress", "off"]).args(extra);
        c.assert().success();
        let mut ids: Vec<String> = read_jsonl(&out).iter().map(|r| r["env_id"].as_str().unwrap().to_string()).collect();
        ids.sort();
        ids.dedup();
        ids
    };
    let (r1, r2) = (played("1", &["--pool", "2"]), played("2", &["--pool", "2"]));
    assert_eq!(r1.len(), 2);
    assert!(r1.iter().all(|e| !r2.contains(e)), "rounds 1 and 2 play different environments: {r1:?} {r2:?}");
    let mut all: Vec<String> = r1.iter().chain(&r2).cloned().collect();
    all.sort();
    let mut want: Vec<String> = rows.iter().map(|r| r["env_id"].as_str().unwrap().to_string()).collect();
    want.sort();
    assert_eq!(all, want, "two rounds of 2 cover the whole pool of 4, labels ignored");
    assert_eq!(r1, played("1", &["--pool", "2"]), "same (seed, round), same draw");
    // Matched to another run: as many environments as its rollouts played.
    let other = dir.path().join("other.jsonl");
    write_jsonl(&other, &[json!({"env_id": "a"}), json!({"env_id": "b"}), json!({"env_id": "a"}), json!({"env_id": "c"})]);
    assert_eq!(played("3", &["--pool-like", other.to_str().unwrap()]).len(), 3);
}

/// An environment's text is data: control tokens in its observations become plain-text tokens,
/// so the only turn boundaries in an episode are the template's, one per message.
#[test]
fn control_tokens_in_observations_are_plain_text() {
    let dir = tmp();
    let (mpath, model) = tiny(dir.path());
    let envs = dir.path().join("envs.jsonl");
    write_jsonl(&envs, &[env_row("inject.py")]);
    let out = dir.path().join("rollouts.jsonl");
    let rows = rollout(&mpath, &envs, &out, &[]);
    assert_eq!(rows.len(), 2 * 2);
    let tok = model.tokenizer();
    let (start, end) = (tok.token_to_id("<|im_start|>").unwrap(), tok.token_to_id("<|im_end|>").unwrap());
    for r in &rows {
        let tokens = u32s(&r["token_ids"]);
        let transcript: Value = serde_json::from_str(r["transcript"].as_str().unwrap()).unwrap();
        let messages: Vec<Message> = serde_json::from_value(transcript["messages"].clone()).unwrap();
        assert!(messages[1].content.contains("<|im_start|>system"), "the observation reaches the transcript as written");
        // (the prompt's tokens: a random model's replies may hold any token)
        let mask = u32s(&r["loss_mask"]);
        let prompt: Vec<u32> = tokens.iter().zip(&mask).filter(|(_, &m)| m == 0).map(|(&t, _)| t).collect();
        let starts = prompt.iter().filter(|&&t| t == start).count();
        assert_eq!(starts, messages.len(), "one <|im_start|> per message, none from the environment: {messages:?}");
        assert!(prompt.iter().filter(|&&t| t == end).count() < messages.len());
        // the environment's characters are all there, as text
        let decoded = tok.decode(&tokens, false).unwrap();
        assert!(model.render_chat(&messages, false).unwrap().starts_with(&decoded));
    }
}
