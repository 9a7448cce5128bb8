//! The generation engine on tiny random models: the same outputs whatever the slot count, the
//! order of the requests or the KV budget; the static decoder's tokens at temperature 0; the
//! scorer's log-probs; keys and values reused within a call (a group's shared prompt) and across
//! calls (an episode's next turn).

use candle_core::Device;
use spade_model::{tiny_model, Family, Generation, GenerationRequest, Message, Model, Repr, SamplingParams, TinySpec};

fn tiny(seed: u64, family: Family) -> Model {
    tiny_model(seed, TinySpec { family, ..TinySpec::default() }, &Device::Cpu).unwrap()
}

/// Prompts of different lengths, one of them longer than a prefill chunk (256), and a group of
/// four sharing one prompt.
fn requests(m: &Model) -> Vec<GenerationRequest> {
    let long = "The designer writes an environment; the agent plays it. ".repeat(12);
    let texts = ["Hello there", "The cat sat on the mat, 12345.", "x", long.as_str()];
    let mut out: Vec<GenerationRequest> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| GenerationRequest { prompt: m.encode_chat(&[Message::user(*t)], true).unwrap(), seed: 10 + i as u64 })
        .collect();
    let shared = m.encode_chat(&[Message::user("A group of four samples shares this prompt, word for word.")], true).unwrap();
    out.extend((0..4).map(|g| GenerationRequest { prompt: shared.clone(), seed: 100 + g }));
    out
}

fn params(max_batch: usize) -> SamplingParams {
    SamplingParams { temperature: 1.0, max_new_tokens: 24, stop_on_eos: true, max_batch, ..Default::default() }
}

fn tokens(gens: &[Generation]) -> Vec<Vec<u32>> {
    gens.iter().map(|g| g.tokens.clone()).collect()
}

fn assert_same(a: &[Generation], b: &[Generation], what: &str) {
    assert_close(a, b, what, 1e-5)
}

fn assert_close(a: &[Generation], b: &[Generation], what: &str, tol: f32) {
    assert_eq!(tokens(a), tokens(b), "{what}: tokens differ");
    for (x, y) in a.iter().zip(b) {
        assert_eq!(x.finish, y.finish, "{what}");
        for (p, q) in x.logprobs.iter().zip(&y.logprobs) {
            assert!((p - q).abs() <= tol, "{what}: log-prob {p} vs {q}");
        }
    }
}

#[test]
fn outputs_do_not_depend_on_slots_order_or_kv_budget() {
    for family in [Family::Llama, Family::Qwen2] {
        let mut m = tiny(3, family);
        let reqs = requests(&m);
        let base = m.generate_repr(Repr::F32, &reqs, &params(1)).unwrap();
        assert!(base.iter().any(|g| g.tokens.len() > 1));
        for slots in [2, 3, 8, 64] {
            let out = m.generate_repr(Repr::F32, &reqs, &params(slots)).unwrap();
            assert_same(&base, &out, &format!("{family:?} slots {slots}"));
        }
        // Reversed requests: each still gets its own sample.
        let mut rev = reqs.clone();
        rev.reverse();
        let mut out = m.generate_repr(Repr::F32, &rev, &params(4)).unwrap();
        out.reverse();
        assert_same(&base, &out, &format!("{family:?} reversed"));
        // A budget that holds one sequence at a time: prompts wait, nothing changes.
        m.set_kv_budget(1);
        let before = m.engine_stats().kv_waits;
        let out = m.generate_repr(Repr::F32, &reqs, &params(8)).unwrap();
        assert_same(&base, &out, &format!("{family:?} tight budget"));
        assert!(m.engine_stats().kv_waits > before, "a tight budget makes prompts wait");
    }
}

#[test]
fn greedy_tokens_equal_the_static_decoder_and_log_probs_the_scorer() {
    for family in [Family::Llama, Family::Qwen2] {
        let m = tiny(4, family);
        let reqs = requests(&m);
        for t in [0.0f32, 0.7] {
            let p = SamplingParams { temperature: t, stop_on_eos: false, max_new_tokens: 16, max_batch: 3, ..Default::default() };
            let engine = m.generate_repr(Repr::F32, &reqs, &p).unwrap();
            let fixed = m.generate_static(Repr::F32, &reqs, &p).unwrap();
            assert_eq!(tokens(&engine), tokens(&fixed), "{family:?} T={t}");
            for (r, g) in reqs.iter().zip(&engine) {
                let scored = m.score_vec(&r.prompt, &g.tokens, t).unwrap();
                for (a, b) in g.logprobs.iter().zip(&scored) {
                    assert!((a - b).abs() <= 1e-4, "{family:?} T={t}: engine {a} vs scorer {b}");
                }
            }
        }
    }
}

/// A quantised representation in the engine: the same samples whatever the slots (log-probs within
/// 1e-2: where candle's quantised matmul runs, it sums a row's blocks in an order that depends on
/// the rows beside it; our kernels compute each row alone), and, prompt and completion both run
/// quantised, log-probs within a mean `tol` of the f32 scorer's.
fn quantised_runs_near_the_scorer(repr: Repr, tol: f64) {
    let mut m = tiny(5, Family::Llama);
    m.set_inference_repr(repr).unwrap();
    assert_eq!(m.inference_repr(), repr);
    let reqs = requests(&m);
    let p = SamplingParams { temperature: 1.0, stop_on_eos: false, max_new_tokens: 12, max_batch: 1, ..Default::default() };
    let one = m.generate_repr(repr, &reqs, &p).unwrap();
    let many = m.generate_repr(repr, &reqs, &SamplingParams { max_batch: 8, ..p.clone() }).unwrap();
    assert_close(&one, &many, &format!("{repr} slots 1 vs 8"), 1e-2);
    let (mut sum, mut n) = (0f64, 0usize);
    for (r, g) in reqs.iter().zip(&one) {
        for (a, b) in g.logprobs.iter().zip(m.score_vec(&r.prompt, &g.tokens, 1.0).unwrap()) {
            sum += (a - b).abs() as f64;
            n += 1;
        }
    }
    assert!(sum / (n as f64) < tol, "{repr}: mean |Δ log-prob| {}", sum / n as f64);
}

#[test]
fn quantised_projections_run_in_the_engine() {
    quantised_runs_near_the_scorer(Repr::Q8_0, 0.05);
}

#[test]
fn q4_1_runs_in_the_engine_near_the_f32_scorer() {
    // 4-bit weights: further from the f32 scorer than q8_0, still near it.
    quantised_runs_near_the_scorer(Repr::Q4_1, 0.25);
}

#[test]
fn a_group_prefills_its_shared_prompt_once() {
    let m = tiny(6, Family::Llama);
    let reqs = requests(&m);
    let shared = &reqs[4].prompt;
    let before = m.engine_stats();
    m.generate_repr(Repr::F32, &reqs[4..], &params(4)).unwrap();
    let s = m.engine_stats();
    // Three of the four copy all but the last prompt token.
    assert_eq!(s.reused_tokens - before.reused_tokens, 3 * (shared.len() - 1));
    assert_eq!(s.sequences - before.sequences, 4);
}

#[test]
fn a_next_turn_prefills_only_its_new_tokens_when_prefixes_are_kept() {
    let mut kept = tiny(7, Family::Qwen2);
    kept.set_prefix_cache(true);
    let fresh = tiny(7, Family::Qwen2);
    let p = SamplingParams { temperature: 1.0, stop_on_eos: false, max_new_tokens: 20, max_batch: 4, ..Default::default() };
    let first: Vec<GenerationRequest> = requests(&kept)[..3].to_vec();
    let a = kept.generate_repr(Repr::F32, &first, &p).unwrap();
    assert_same(&a, &fresh.generate_repr(Repr::F32, &first, &p).unwrap(), "turn 1");
    // Turn 2: the transcript so far, then the environment's reply.
    let reply = kept.tokenizer().encode("<|im_start|>user\nThe door opens.<|im_end|>\n<|im_start|>assistant\n", false).unwrap();
    let second: Vec<GenerationRequest> = first
        .iter()
        .zip(&a)
        .map(|(r, g)| GenerationRequest { prompt: [r.prompt.clone(), g.tokens.clone(), reply.clone()].concat(), seed: r.seed + 1 })
        .collect();
    let before = kept.engine_stats();
    let b = kept.generate_repr(Repr::F32, &second, &p).unwrap();
    let s = kept.engine_stats();
    let known: usize = first.iter().zip(&a).map(|(r, g)| r.prompt.len() + g.tokens.len() - 1).sum();
    assert_eq!(s.reused_tokens - before.reused_tokens, known, "every known position is reused");
    assert_eq!(s.computed_tokens - before.computed_tokens, 3 * (reply.len() + 1) + s.generated_tokens - before.generated_tokens - 3);
    assert_same(&b, &fresh.generate_repr(Repr::F32, &second, &p).unwrap(), "turn 2 equals a fresh prefill");
    // New weights representation: nothing stale is reused.
    kept.set_inference_repr(Repr::F32).unwrap();
    let before = kept.engine_stats();
    kept.generate_repr(Repr::F32, &second[..1], &p).unwrap();
    assert_eq!(kept.engine_stats().reused_tokens, before.reused_tokens);
}

/// The kernels' levels (`SPADE_ISA`): every level generates the same q8_0 and q4_1 tokens and
/// log-probs bit for bit (at `scalar` on the reference tiles), and every vector level the same f32 ones, on a
/// tiny model with 64-wide heads (the decode attention kernel's size); f32 at `scalar` (BLAS for
/// the products) the same tokens with log-probs within rounding. The level is read once
/// per process, so each runs in a child process of this test.
#[test]
fn every_kernel_level_generates_the_same_tokens() {
    use spade_model::kernels::{Isa, ISA_ENV};
    const OUT: &str = "SPADE_TEST_LEVEL_OUT";
    if let Ok(path) = std::env::var(OUT) {
        let spec = TinySpec { hidden: 256, intermediate: 256, heads: 4, kv_heads: 2, ..TinySpec::default() };
        let mut m = tiny_model(6, spec, &Device::Cpu).unwrap();
        let reqs = requests(&m);
        let p = SamplingParams { temperature: 1.0, stop_on_eos: false, max_new_tokens: 12, max_batch: 8, ..Default::default() };
        let f32 = m.generate_repr(Repr::F32, &reqs, &p).unwrap();
        m.set_inference_repr(Repr::Q8_0).unwrap();
        let q8 = m.generate_repr(Repr::Q8_0, &reqs, &p).unwrap();
        m.set_inference_repr(Repr::Q4_1).unwrap();
        let q4 = m.generate_repr(Repr::Q4_1, &reqs, &p).unwrap();
        let out: Vec<(Vec<u32>, Vec<f32>)> = f32.iter().chain(&q8).chain(&q4).map(|g| (g.tokens.clone(), g.logprobs.clone())).collect();
        std::fs::write(path, serde_json::to_string(&out).unwrap()).unwrap();
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let run = |isa: Isa| -> Vec<(Vec<u32>, Vec<f32>)> {
        let path = dir.path().join(isa.name());
        // Under an emulator (`make test-arm`: SPADE_TEST_RUNNER="qemu-aarch64 -L …") the child runs through it too.
        let runner = std::env::var("SPADE_TEST_RUNNER").unwrap_or_default();
        let mut cmd: Vec<String> = runner.split_whitespace().map(String::from).collect();
        cmd.push(std::env::current_exe().unwrap().display().to_string());
        let st = std::process::Command::new(&cmd[0])
            .args(&cmd[1..])
            .args(["--exact", "every_kernel_level_generates_the_same_tokens", "--test-threads", "1"])
            .env(ISA_ENV, isa.name())
            .env(OUT, &path)
            .status()
            .unwrap();
        assert!(st.success(), "{isa:?}: the child failed");
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    };
    let best = run(Isa::detected());
    for isa in Isa::runnable() {
        let out = run(isa);
        assert_eq!(out.len(), best.len());
        for (i, ((ta, la), (tb, lb))) in out.iter().zip(&best).enumerate() {
            assert_eq!(ta, tb, "{isa:?} vs {:?}: tokens of generation {i} differ", Isa::detected());
            // The first third are f32's generations, then q8_0's, then q4_1's.
            if isa == Isa::Scalar && i < out.len() / 3 {
                for (a, b) in la.iter().zip(lb) {
                    assert!((a - b).abs() < 2e-2, "scalar generation {i}: log-prob {a} vs {b}");
                }
            } else {
                assert_eq!(la, lb, "{isa:?}: log-probs of generation {i} differ");
            }
        }
    }
}
