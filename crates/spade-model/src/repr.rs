//! How the matmul weights are represented for inference (a leaf: the model, the engine and the
//! KV store name it).

/// How the matmul weights are represented for inference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Repr {
    /// The trainable f32 weights themselves (log-probs equal the trainer's).
    F32,
    /// 8-bit blocks quantised from the f32 weights (faster decode on CPU).
    #[serde(rename = "q8_0")]
    Q8_0,
    /// The layers' products in 4-bit blocks with a minimum (Q4_1, as the default model's GGUF
    /// ships them: packing its layers gives back the file's blocks), the output head in Q8_0:
    /// 0.6× the bytes of `q8_0` per token, for decode on a core whose memory sets the pace.
    #[serde(rename = "q4_1")]
    Q4_1,
}

impl std::str::FromStr for Repr {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "f32" => Ok(Repr::F32),
            "q8_0" | "q8" => Ok(Repr::Q8_0),
            "q4_1" | "q4" => Ok(Repr::Q4_1),
            _ => Err(format!("unknown representation {s:?} (f32 | q8_0 | q4_1 | auto)")),
        }
    }
}

impl std::fmt::Display for Repr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Repr::F32 => "f32",
            Repr::Q8_0 => "q8_0",
            Repr::Q4_1 => "q4_1",
        })
    }
}

impl Repr {
    /// Whether the engine caches keys and values in f16 for this representation: the quantised
    /// ones (their log-probs are already the sampler's, not the trainer's, and truncated
    /// importance sampling corrects the difference); `f32` keeps f32 keys and values, so its
    /// log-probs still equal the trainer's.
    pub fn kv_half(self) -> bool {
        self != Repr::F32
    }

    /// The faster representation for CPU generation here: `q8_0` where the engine's Q8_0 product
    /// runs on integer dot-product instructions (kernel levels `avx512`, `avxvnni`, `avx2`,
    /// `dotprod`: [`crate::kernels::Isa::integer_dot`]; the model bench measures it), else `f32`.
    pub fn fastest() -> Repr {
        if crate::kernels::q8::available() && crate::kernels::isa().integer_dot() {
            Repr::Q8_0
        } else {
            Repr::F32
        }
    }

    /// A `--repr` value: `f32`, `q8_0`, or `auto` ([`Repr::fastest`], said on stderr).
    pub fn parse_choice(s: &str) -> std::result::Result<Repr, String> {
        if !s.trim().eq_ignore_ascii_case("auto") {
            return s.parse();
        }
        let r = Repr::fastest();
        eprintln!("--repr auto: {r} (the CPU's kernel level: {})", crate::kernels::isa().name());
        Ok(r)
    }
}
