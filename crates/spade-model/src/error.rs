//! The crate's error type: wraps candle, tokenizers, minijinja, serde and I/O errors.

use std::path::PathBuf;

/// Errors of the model runtime.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Candle(#[from] candle_core::Error),
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    #[error("chat template: {0}")]
    Template(#[from] minijinja::Error),
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A model file or folder that cannot be used (missing file, unknown architecture, bad metadata).
    #[error("{0}")]
    Model(String),
    /// A caller's request that cannot be served (empty prompt, bad option).
    #[error("{0}")]
    Invalid(String),
    /// The generation server failed, or answered what cannot be used.
    #[error("server {0}")]
    Server(String),
}

impl From<tokenizers::Error> for Error {
    fn from(e: tokenizers::Error) -> Self {
        Error::Tokenizer(e.to_string())
    }
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn model_err(msg: impl Into<String>) -> Error {
    Error::Model(msg.into())
}
