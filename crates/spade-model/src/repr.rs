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
}

impl std::str::FromStr for Repr {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "f32" => Ok(Repr::F32),
            "q8_0" | "q8" => Ok(Repr::Q8_0),
            _ => Err(format!("unknown representation {s:?} (f32 | q8_0)")),
        }
    }
}

impl std::fmt::Display for Repr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Repr::F32 => "f32",
            Repr::Q8_0 => "q8_0",
        })
    }
}
