//! Generation through an OpenAI-compatible completions server (vLLM, SGLang, llama.cpp's
//! `llama-server`) serving the same model: the second [`Generator`], [`ServedModel`] (the
//! `server` feature; [`ServerArgs`] are command-line flags with the `cli` feature too).
//!
//! Token-in/token-out is kept end to end. The prompt goes as token ids. The reply's token ids
//! are taken as the server reports them: llama.cpp gives each token's `id`; vLLM gives
//! `token_id:N` strings when asked (`return_tokens_as_token_ids`, always sent). A server that
//! reports only token strings has each mapped to its id in the model's vocabulary; a string
//! that several ids decode to fails the request. The text is never re-tokenised. Every reply is
//! checked: its ids must decode to the text the server sent, so a server that drops tokens
//! from its log-probs fails loudly instead of corrupting a training sample.
//!
//! Log-probs: servers report `log_softmax(logits)` of the sampled token, at temperature 1,
//! before top-k/top-p. That is this crate's contract at temperature 1 and for greedy decoding
//! (temperature 0); any other temperature is refused, because its log-probs cannot be recovered
//! from the server's.
//!
//! As many requests are in flight at once as the engine would decode sequences (`--slots`, the
//! call's `max_batch`; `--server-concurrency` overrides it); transient failures (connection
//! refused or reset, timeouts, HTTP 408/429/5xx) are retried with exponential backoff; a server
//! that stays down, answers without log-probs, or reports a token the vocabulary does not have
//! is an error naming the server and the request.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rayon::prelude::*;
use serde_json::{json, Value};

use crate::error::{Error, Result};
use crate::generate::{FinishReason, Generation, GenerationRequest, SamplingParams};
use crate::generator::Generator;
use crate::model::Model;

/// Environment variable for `--server`.
pub const SERVER_ENV: &str = "SPADE_SERVER";

/// A served model: the API's base URL (up to and including `/v1`) and the model name requests
/// carry. Written `BASE_URL#MODEL`, optionally prefixed `openai:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    pub base_url: String,
    pub model: String,
}

impl FromStr for ServerSpec {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let s = s.strip_prefix("openai:").unwrap_or(s);
        let (url, model) = s.rsplit_once('#').ok_or_else(|| format!("{s:?}: expected BASE_URL#MODEL, e.g. http://127.0.0.1:8000/v1#smollm2"))?;
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(format!("{url:?}: the server URL must start with http:// or https://"));
        }
        if model.is_empty() {
            return Err(format!("{s:?}: no model name after '#'"));
        }
        Ok(ServerSpec { base_url: url.trim_end_matches('/').to_string(), model: model.to_string() })
    }
}

impl std::fmt::Display for ServerSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}#{}", self.base_url, self.model)
    }
}

/// Options of the server backend; with the `cli` feature, command-line flags (flatten into the
/// stages that generate).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct ServerArgs {
    /// Generate through an OpenAI-compatible server (vLLM, SGLang, llama.cpp's llama-server)
    /// instead of the embedded model: BASE_URL#MODEL, e.g. http://127.0.0.1:8000/v1#smollm2.
    /// --model still gives the tokenizer and chat template: the served model's
    #[cfg_attr(feature = "cli", arg(long, env = SERVER_ENV, value_name = "URL#MODEL"))]
    pub server: Option<ServerSpec>,
    /// Requests to the server in flight at once [default: --slots, the sequences the embedded
    /// engine would decode at once]
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub server_concurrency: Option<usize>,
    /// Attempts per request on transient errors (connection refused or reset, timeout, HTTP
    /// 408/429/5xx), with exponential backoff from 0.5 s
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 5, value_name = "N"))]
    pub server_retries: u32,
    /// Seconds one request may take
    #[cfg_attr(feature = "cli", arg(long, default_value_t = 600.0, value_name = "SECS"))]
    pub server_timeout: f64,
}

impl Default for ServerArgs {
    fn default() -> Self {
        ServerArgs { server: None, server_concurrency: None, server_retries: 5, server_timeout: 600.0 }
    }
}

impl ServerArgs {
    /// The generator of `model`: with `--server`, the server serving it (connected, and checked
    /// to answer and to serve the model); without, the model itself.
    pub fn generator(&self, model: Model) -> Result<Box<dyn Generator>> {
        Ok(match &self.server {
            Some(spec) => Box::new(ServedModel::new(model, Server::connect(spec.clone(), self)?)),
            None => Box::new(model),
        })
    }

    /// Record the backend in a stage's configuration (a JSON object).
    pub fn record(&self, config: &mut Value) {
        if let (Some(o), Some(s)) = (config.as_object_mut(), &self.server) {
            o.insert("server".into(), s.to_string().into());
        }
    }
}

/// A model served by a completions server: the model here gives the tokenizer, chat template,
/// end-of-turn ids and context length; the server the tokens. The [`Generator`] of `--server`.
#[derive(Debug)]
pub struct ServedModel {
    model: Model,
    server: Server,
}

impl ServedModel {
    pub fn new(model: Model, server: Server) -> ServedModel {
        ServedModel { model, server }
    }

    pub fn server(&self) -> &Server {
        &self.server
    }
}

impl Generator for ServedModel {
    fn model(&self) -> &Model {
        &self.model
    }

    /// The server's answers, `done` called once all are in.
    fn generate_with_progress(
        &self,
        requests: &[GenerationRequest],
        params: &SamplingParams,
        done: &mut dyn FnMut(usize),
    ) -> Result<Vec<Generation>> {
        let out = self.server.generate(&self.model, requests, params)?;
        done(out.len());
        Ok(out)
    }
}

/// A connection to a completions server.
pub struct Server {
    spec: ServerSpec,
    agent: ureq::Agent,
    /// Requests in flight; `None`: the call's slots.
    concurrency: Option<usize>,
    retries: u32,
    /// Token string → ids, for servers that report only strings (built on first need).
    strings: OnceLock<HashMap<String, Vec<u32>>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("spec", &self.spec).field("concurrency", &self.concurrency).finish()
    }
}

/// A failed request: `retry` when another attempt may succeed.
struct Failure {
    retry: bool,
    msg: String,
}

impl Server {
    /// Connect: the server must answer `GET /models` and, when it lists models, list this one.
    pub fn connect(spec: ServerSpec, args: &ServerArgs) -> Result<Server> {
        if spec.base_url.starts_with("https://") {
            return Err(Error::Server(format!(
                "{spec}: https is not built in (no TLS in this build); reach the server over http, e.g. through an SSH tunnel"
            )));
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs_f64(args.server_timeout.max(1.0))))
            .http_status_as_error(false)
            .build()
            .into();
        let server =
            Server { spec, agent, concurrency: args.server_concurrency.map(|n| n.max(1)), retries: args.server_retries, strings: OnceLock::new() };
        let models = server.call("models", None)?;
        let ids: Vec<&str> = models.get("data").and_then(Value::as_array).into_iter().flatten().filter_map(|m| m.get("id")?.as_str()).collect();
        if !ids.is_empty() && !ids.contains(&server.spec.model.as_str()) {
            return Err(Error::Server(format!("{}: serves {ids:?}, not {:?} (the name after '#')", server.spec.base_url, server.spec.model)));
        }
        Ok(server)
    }

    pub fn spec(&self) -> &ServerSpec {
        &self.spec
    }

    /// One API call (`GET` when `body` is None), retried on transient failures.
    fn call(&self, path: &str, body: Option<&Value>) -> Result<Value> {
        let url = format!("{}/{path}", self.spec.base_url);
        let mut last = String::new();
        for attempt in 0..=self.retries {
            if attempt > 0 {
                std::thread::sleep(Duration::from_secs_f64((0.5 * 2f64.powi(attempt as i32 - 1)).min(30.0)));
            }
            match self.once(&url, body) {
                Ok(v) => return Ok(v),
                Err(Failure { retry: true, msg }) => {
                    tracing::warn!("{url}: {msg} (attempt {} of {})", attempt + 1, self.retries + 1);
                    last = msg;
                }
                Err(Failure { retry: false, msg }) => return Err(Error::Server(format!("{url}: {msg}"))),
            }
        }
        Err(Error::Server(format!("{url}: {last} (gave up after {} attempts)", self.retries + 1)))
    }

    fn once(&self, url: &str, body: Option<&Value>) -> std::result::Result<Value, Failure> {
        let sent = match body {
            Some(b) => self.agent.post(url).send_json(b),
            None => self.agent.get(url).call(),
        };
        let mut resp = sent.map_err(|e| Failure { retry: true, msg: format!("unreachable: {e}") })?;
        let status = resp.status().as_u16();
        let text = resp
            .body_mut()
            .with_config()
            .limit(256 << 20)
            .read_to_string()
            .map_err(|e| Failure { retry: true, msg: format!("reading the reply: {e}") })?;
        if !(200..300).contains(&status) {
            let retry = matches!(status, 408 | 429 | 500 | 502 | 503 | 504);
            let short: String = text.chars().take(400).collect();
            return Err(Failure { retry, msg: format!("HTTP {status}: {short}") });
        }
        serde_json::from_str(&text).map_err(|e| Failure { retry: false, msg: format!("reply is not JSON ({e})") })
    }

    /// Continue every prompt, as many requests at a time as the call has slots (`max_batch`) or
    /// `--server-concurrency` says: one that is answered hands its place to the next waiting
    /// prompt, as a finished sequence frees its slot in the engine; results in order.
    pub fn generate(&self, model: &Model, requests: &[GenerationRequest], params: &SamplingParams) -> Result<Vec<Generation>> {
        if !(params.temperature == 0.0 || params.temperature == 1.0) {
            return Err(Error::Invalid(format!(
                "temperature {}: a server reports log-probs at temperature 1, so it generates at temperature 1 or 0 (greedy) only",
                params.temperature
            )));
        }
        if !(params.top_p > 0.0) {
            return Err(Error::Invalid("top_p must be > 0".into()));
        }
        // Requests block on the network: a pool of their own, one request per task.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(self.concurrency.unwrap_or(params.max_batch).min(requests.len()).max(1))
            .build()
            .map_err(|e| Error::Server(format!("request threads: {e}")))?;
        pool.install(|| requests.par_iter().with_max_len(1).map(|r| self.one(model, r, params)).collect())
    }

    /// One prompt.
    fn one(&self, model: &Model, req: &GenerationRequest, params: &SamplingParams) -> Result<Generation> {
        if req.prompt.is_empty() {
            return Err(Error::Invalid("empty prompt".into()));
        }
        let budget = params.max_new_tokens.min(model.context_length().saturating_sub(req.prompt.len()));
        if budget == 0 {
            return model.finish_generation(Vec::new(), Vec::new(), FinishReason::Length, params);
        }
        let mut body = json!({
            "model": self.spec.model,
            "prompt": req.prompt,
            "max_tokens": budget,
            "temperature": params.temperature,
            "top_p": params.top_p,
            // Seeds fit every server's range (llama.cpp takes 32 bits).
            "seed": (req.seed ^ (req.seed >> 32)) & 0x7fff_ffff,
            "n": 1,
            "stream": false,
            "logprobs": 1,
            "n_probs": 1,
            // vLLM: ids instead of strings, special tokens kept, stop strings in the ids.
            "return_tokens_as_token_ids": true,
            "skip_special_tokens": false,
            "include_stop_str_in_output": true,
            "ignore_eos": !params.stop_on_eos,
        });
        if params.stop_on_eos {
            // The model's end-of-turn ids (the chat template's included), as the embedded backend
            // stops on them: vLLM and SGLang otherwise stop only on the config's EOS.
            body["stop_token_ids"] = json!(model.eos_ids());
        }
        if params.top_k > 0 {
            body["top_k"] = json!(params.top_k);
        }
        if !params.stop.is_empty() {
            body["stop"] = json!(params.stop);
        }
        let reply = self.call("completions", Some(&body))?;
        self.parse(model, &reply, params).map_err(|e| Error::Server(format!("{}: {e}", self.spec)))
    }

    /// The generation a completions reply describes.
    fn parse(&self, model: &Model, reply: &Value, params: &SamplingParams) -> Result<Generation> {
        let choice = reply.pointer("/choices/0").ok_or_else(|| Error::Server("reply has no choices".into()))?;
        let lp = choice
            .get("logprobs")
            .filter(|v| !v.is_null())
            .ok_or_else(|| Error::Server("reply has no log-probs (the server must support `logprobs` on completions)".into()))?;
        let (tokens, logprobs) = if let Some(content) = lp.get("content").and_then(Value::as_array) {
            // llama.cpp: [{id, token, logprob, …}]
            let mut t = Vec::with_capacity(content.len());
            let mut l = Vec::with_capacity(content.len());
            for (k, c) in content.iter().enumerate() {
                let id = c.get("id").and_then(Value::as_u64).ok_or_else(|| Error::Server(format!("logprobs.content[{k}] has no id")))?;
                t.push(id as u32);
                l.push(number(c.get("logprob"), &format!("logprobs.content[{k}].logprob"))?);
            }
            (t, l)
        } else {
            // OpenAI completions: tokens (strings) and token_logprobs.
            let strs = lp.get("tokens").and_then(Value::as_array).ok_or_else(|| Error::Server("logprobs has neither content nor tokens".into()))?;
            let lps = lp.get("token_logprobs").and_then(Value::as_array).ok_or_else(|| Error::Server("logprobs has no token_logprobs".into()))?;
            if lps.len() != strs.len() {
                return Err(Error::Server(format!("{} tokens but {} token_logprobs", strs.len(), lps.len())));
            }
            let mut t = Vec::with_capacity(strs.len());
            for (k, s) in strs.iter().enumerate() {
                let s = s.as_str().ok_or_else(|| Error::Server(format!("logprobs.tokens[{k}] is not a string")))?;
                t.push(self.token_id(model, s).map_err(|e| Error::Server(format!("logprobs.tokens[{k}]: {e}")))?);
            }
            let l = lps.iter().enumerate().map(|(k, v)| number(Some(v), &format!("logprobs.token_logprobs[{k}]"))).collect::<Result<_>>()?;
            (t, l)
        };
        let vocab = model.tokenizer().vocab_size() as u32;
        if let Some(bad) = tokens.iter().find(|&&t| t >= vocab) {
            return Err(Error::Server(format!("token id {bad} is outside the model's vocabulary ({vocab}): is the server serving this model?")));
        }
        let text = choice.get("text").and_then(Value::as_str).unwrap_or("");
        let ends_eos = tokens.last().is_some_and(|t| model.eos_ids().contains(t));
        let body = if ends_eos { &tokens[..tokens.len() - 1] } else { &tokens[..] };
        let decoded = model.tokenizer().decode(body, false)?;
        // The text may carry the end token too (vLLM keeps special tokens and stop strings in it).
        if !(decoded.starts_with(text) || ends_eos && model.tokenizer().decode(&tokens, false)?.starts_with(text)) {
            // Where they part: the first differing character, with a little context.
            let at =
                decoded.char_indices().zip(text.chars()).find(|((_, a), b)| a != b).map(|((i, _), _)| i).unwrap_or(decoded.len().min(text.len()));
            let from = decoded[..at].char_indices().rev().nth(20).map(|(i, _)| i).unwrap_or(0);
            return Err(Error::Server(format!(
                "the reported token ids decode to {:?}, not the reply's text {:?} (from byte {at}: {:?} vs {:?}): the server left tokens out of its log-probs",
                clip(&decoded),
                clip(text),
                clip(&decoded[from..]),
                clip(text.get(from..).unwrap_or(""))
            )));
        }
        let hit_stop = params.stop.iter().any(|s| !s.is_empty() && decoded.contains(s.as_str()));
        let finish = match choice.get("finish_reason").and_then(Value::as_str) {
            _ if ends_eos && params.stop_on_eos => FinishReason::Eos,
            Some("stop") if hit_stop => FinishReason::Stop,
            // llama.cpp leaves the tokens that complete a stop string out of the reply: the
            // generation ends before them (its ids still decode to its text).
            Some("stop") if !params.stop.is_empty() => FinishReason::Stop,
            Some("stop") => {
                return Err(Error::Server(
                    "the reply stopped on an end-of-sequence token it did not report; use a server that reports every generated token (vLLM, SGLang, llama.cpp's llama-server)".into(),
                ))
            }
            Some("length") => FinishReason::Length,
            other => return Err(Error::Server(format!("unexpected finish_reason {other:?}"))),
        };
        model.finish_generation(tokens, logprobs, finish, params)
    }

    /// The id of a token the server names by its text (or `token_id:N`).
    fn token_id(&self, model: &Model, s: &str) -> Result<u32> {
        if let Some(n) = s.strip_prefix("token_id:") {
            return n.parse().map_err(|_| Error::Server(format!("bad token id {s:?}")));
        }
        let map = self.strings.get_or_init(|| {
            let tok = model.tokenizer();
            let mut m: HashMap<String, Vec<u32>> = HashMap::new();
            for id in 0..tok.vocab_size() as u32 {
                if let Ok(text) = tok.decode(&[id], false) {
                    m.entry(text).or_default().push(id);
                }
            }
            m
        });
        match map.get(s).map(Vec::as_slice) {
            Some([id]) => Ok(*id),
            Some(ids) => Err(Error::Server(format!(
                "token {s:?} is the text of {} ids ({:?}…): ambiguous; ask the server for ids (vLLM: return_tokens_as_token_ids)",
                ids.len(),
                &ids[..ids.len().min(4)]
            ))),
            None => Err(Error::Server(format!("token {s:?} is not the text of any id of the model's vocabulary"))),
        }
    }
}

/// A `llama-server` child on a free loopback port serving one GGUF under an alias: for tests,
/// benches and local runs. Killed on drop. Counts the completions it has finished (from its log).
pub struct LocalServer {
    child: std::process::Child,
    port: u16,
    alias: String,
    served: Arc<AtomicUsize>,
}

impl LocalServer {
    /// Start `bin` on `gguf` with `slots` parallel sequences of `ctx_per_slot` tokens each and
    /// `threads` threads, and wait (up to 2 min) until it answers.
    pub fn start(
        bin: &std::path::Path,
        gguf: &std::path::Path,
        alias: &str,
        slots: usize,
        ctx_per_slot: usize,
        threads: usize,
    ) -> Result<LocalServer> {
        use std::io::BufRead;
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map_err(|e| Error::io("127.0.0.1:0", e))?.port();
        let mut child = std::process::Command::new(bin)
            .arg("-m")
            .arg(gguf)
            .args(["--alias", alias, "--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["-c", &(slots * ctx_per_slot).to_string(), "-np", &slots.to_string(), "-t", &threads.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| Error::io(bin, e))?;
        let served = Arc::new(AtomicUsize::new(0));
        if let Some(err) = child.stderr.take() {
            let count = served.clone();
            std::thread::spawn(move || {
                for line in std::io::BufReader::new(err).lines().map_while(std::result::Result::ok) {
                    if line.contains("stop processing") {
                        count.fetch_add(1, Ordering::SeqCst);
                    }
                }
            });
        }
        let s = LocalServer { child, port, alias: alias.to_string(), served };
        let args = ServerArgs { server_retries: 0, ..Default::default() };
        let t = std::time::Instant::now();
        loop {
            match Server::connect(s.spec(), &args) {
                Ok(_) => return Ok(s),
                Err(e) if t.elapsed() > Duration::from_secs(120) => {
                    return Err(Error::Server(format!("{} did not come up on port {port}: {e}", bin.display())))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(250)),
            }
        }
    }

    /// `http://127.0.0.1:PORT/v1#ALIAS`.
    pub fn spec(&self) -> ServerSpec {
        ServerSpec { base_url: format!("http://127.0.0.1:{}/v1", self.port), model: self.alias.clone() }
    }

    /// Completions answered so far.
    pub fn served(&self) -> usize {
        self.served.load(Ordering::SeqCst)
    }

    /// Kill the server now.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn number(v: Option<&Value>, what: &str) -> Result<f32> {
    v.and_then(Value::as_f64).map(|x| x as f32).ok_or_else(|| Error::Server(format!("{what} is not a number")))
}

fn clip(s: &str) -> String {
    let c: String = s.chars().take(80).collect();
    if c.len() < s.len() {
        format!("{c}…")
    } else {
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        let s: ServerSpec = "openai:http://127.0.0.1:8000/v1/#smollm2".parse().unwrap();
        assert_eq!(s, ServerSpec { base_url: "http://127.0.0.1:8000/v1".into(), model: "smollm2".into() });
        assert_eq!(s.to_string(), "http://127.0.0.1:8000/v1#smollm2");
        assert!("http://x/v1".parse::<ServerSpec>().unwrap_err().contains("BASE_URL#MODEL"));
        assert!("ftp://x/v1#m".parse::<ServerSpec>().unwrap_err().contains("http://"));
        assert!("http://x/v1#".parse::<ServerSpec>().unwrap_err().contains("no model"));
    }

    /// A server value that is never called (replies are parsed offline).
    fn offline() -> Server {
        Server {
            spec: "http://127.0.0.1:9/v1#m".parse().unwrap(),
            agent: ureq::Agent::new_with_defaults(),
            concurrency: Some(1),
            retries: 0,
            strings: OnceLock::new(),
        }
    }

    #[test]
    fn replies_become_generations_or_loud_errors() {
        let m = crate::tiny_model(1, crate::TinySpec::default(), &candle_core::Device::Cpu).unwrap();
        let s = offline();
        let p = SamplingParams::default();
        let ids = m.tokenizer().encode("the cat", false).unwrap();
        let eos = m.eos_ids()[0];
        let content = |ids: &[u32]| -> Vec<Value> { ids.iter().map(|&i| json!({"id": i, "logprob": -0.5})).collect() };
        let reply = |text: &str, finish: &str, logprobs: Value| json!({"choices": [{"text": text, "finish_reason": finish, "logprobs": logprobs}]});
        // llama.cpp: ids in logprobs.content, the end-of-sequence token reported.
        let with_eos: Vec<u32> = ids.iter().copied().chain([eos]).collect();
        let g = s.parse(&m, &reply("the cat", "stop", json!({"content": content(&with_eos)})), &p).unwrap();
        assert_eq!((&g.tokens, g.finish, g.text.as_str()), (&with_eos, FinishReason::Eos, "the cat"));
        // vLLM with special tokens kept: the end token is in the text as well.
        let shown = format!("the cat{}", m.tokenizer().decode(&[eos], false).unwrap());
        let g = s.parse(&m, &reply(&shown, "stop", json!({"content": content(&with_eos)})), &p).unwrap();
        assert_eq!((&g.tokens, g.finish, g.text.as_str()), (&with_eos, FinishReason::Eos, "the cat"));
        // OpenAI format: token strings mapped through the vocabulary, or vLLM's token_id:N.
        let strs: Vec<String> = ids.iter().map(|i| m.tokenizer().decode(&[*i], false).unwrap()).collect();
        let vllm: Vec<String> = ids.iter().map(|i| format!("token_id:{i}")).collect();
        for toks in [strs, vllm] {
            let g = s.parse(&m, &reply("the cat", "length", json!({"tokens": toks, "token_logprobs": vec![-1.0; ids.len()]})), &p).unwrap();
            assert_eq!((&g.tokens, g.finish, &g.logprobs), (&ids, FinishReason::Length, &vec![-1.0; ids.len()]));
        }
        let err = |r: Value| s.parse(&m, &r, &p).unwrap_err().to_string();
        // Lone bytes ≥ 0x80 all decode to U+FFFD: the string names no single id.
        let e = err(reply("\u{fffd}", "length", json!({"tokens": ["\u{fffd}"], "token_logprobs": [-1.0]})));
        assert!(e.contains("ambiguous"), "{e}");
        assert!(err(reply("x", "length", Value::Null)).contains("no log-probs"));
        // A token left out of the log-probs: the ids no longer decode to the text.
        assert!(err(reply("the cat", "length", json!({"content": content(&ids[1..])}))).contains("left tokens out"));
        // Stopped on an end-of-sequence token the reply does not carry.
        assert!(err(reply("the cat", "stop", json!({"content": content(&ids)}))).contains("did not report"));
        // Temperatures other than 0 and 1 are refused before any request.
        let hot = SamplingParams { temperature: 0.7, ..p.clone() };
        let e = s.generate(&m, &[GenerationRequest { prompt: ids.clone(), seed: 0 }], &hot).unwrap_err().to_string();
        assert!(e.contains("temperature 0.7"), "{e}");
    }

    #[test]
    fn a_served_model_generates_through_its_server() {
        let m = crate::tiny_model(1, crate::TinySpec::default(), &candle_core::Device::Cpu).unwrap();
        let ids = m.tokenizer().encode("the cat", false).unwrap();
        let served = ServedModel::new(m, offline());
        let g: &dyn Generator = &served;
        assert_eq!(g.model().tokenizer().encode("the cat", false).unwrap(), ids);
        assert!(g.engine_stats().is_none(), "a server has no engine here");
        // The server's checks, not the engine's: temperature 0.7 is refused before any request.
        let hot = SamplingParams { temperature: 0.7, ..Default::default() };
        let mut done = 0;
        let e = g.generate_with_progress(&[GenerationRequest { prompt: ids, seed: 0 }], &hot, &mut |n| done += n).unwrap_err().to_string();
        assert!(e.contains("temperature 0.7") && done == 0, "{e}");
    }

    /// A completions server on loopback that answers every request with `reply` after a pause,
    /// and records the most requests it held at once.
    fn counting_server(reply: Value) -> (ServerSpec, Arc<AtomicUsize>) {
        use std::io::{BufRead, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let seen = most.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let (now, most, reply) = (now.clone(), most.clone(), reply.clone());
                std::thread::spawn(move || {
                    let mut r = std::io::BufReader::new(stream.unwrap());
                    loop {
                        let mut line = String::new();
                        if r.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let models = line.contains("/models");
                        let mut len = 0;
                        loop {
                            let mut h = String::new();
                            r.read_line(&mut h).unwrap();
                            if h.trim().is_empty() {
                                break;
                            }
                            if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                                len = v.trim().parse().unwrap();
                            }
                        }
                        let mut body = vec![0; len];
                        r.read_exact(&mut body).unwrap();
                        let out = if models {
                            json!({"data": []}).to_string()
                        } else {
                            let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(n, Ordering::SeqCst);
                            std::thread::sleep(Duration::from_millis(60));
                            now.fetch_sub(1, Ordering::SeqCst);
                            reply.to_string()
                        };
                        let w = r.get_mut();
                        write!(w, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{out}", out.len()).unwrap();
                        w.flush().unwrap();
                    }
                });
            }
        });
        (format!("http://127.0.0.1:{port}/v1#m").parse().unwrap(), seen)
    }

    #[test]
    fn requests_in_flight_follow_the_slots_unless_set() {
        let m = crate::tiny_model(1, crate::TinySpec::default(), &candle_core::Device::Cpu).unwrap();
        let ids = m.tokenizer().encode("the cat", false).unwrap();
        let content: Vec<Value> = ids.iter().map(|&i| json!({"id": i, "logprob": -0.5})).collect();
        let reply = json!({"choices": [{"text": "the cat", "finish_reason": "length", "logprobs": {"content": content}}]});
        let reqs: Vec<GenerationRequest> = (0..9).map(|i| GenerationRequest { prompt: ids.clone(), seed: i }).collect();
        for (set, slots, expect) in [(None, 3, 3), (Some(2), 5, 2)] {
            let (spec, most) = counting_server(reply.clone());
            let s = Server::connect(spec, &ServerArgs { server_concurrency: set, ..Default::default() }).unwrap();
            let p = SamplingParams { max_batch: slots, max_new_tokens: 8, ..Default::default() };
            let out = s.generate(&m, &reqs, &p).unwrap();
            assert!(out.iter().all(|g| g.tokens == ids));
            assert_eq!(most.load(Ordering::SeqCst), expect, "--server-concurrency {set:?}, {slots} slots");
        }
    }

    #[test]
    fn an_unreachable_server_is_a_clear_error() {
        // A port nothing listens on (bound, then released).
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let spec: ServerSpec = format!("http://127.0.0.1:{port}/v1#m").parse().unwrap();
        let args = ServerArgs { server_retries: 1, ..Default::default() };
        let e = Server::connect(spec, &args).unwrap_err().to_string();
        assert!(e.contains(&format!("127.0.0.1:{port}/v1/models")) && e.contains("unreachable") && e.contains("2 attempts"), "{e}");
    }
}
