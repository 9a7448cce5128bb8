//! Table I/O for every stage: Parquet and JSONL chosen by file extension, `-` for JSONL on
//! stdin/stdout, several files / directories / globs read as one table (shards), record batches
//! streamed, outputs written to a temp file in the target folder and renamed into place.
//!
//! Readers never assume a producer: a stage asks for the columns it uses by name and type
//! ([`Batch::column`]); compatible types (string views, narrower integers, …) are cast, a missing or
//! mistyped column is an error naming the file, and every other column is carried through.

mod read;
mod write;

pub use read::{expand_inputs, Batch, Input, TableReader};
pub use write::{write_batches, TableWriter, WriteMeta};

use std::path::Path;

/// I/O errors; each names the file (and line or row) it is about, in one line.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}: {msg}")]
    Format { path: String, msg: String },
    #[error("{path}: line {line}: {msg}")]
    Line { path: String, line: usize, msg: String },
    #[error("{path}: column `{column}`: {msg}")]
    Column { path: String, column: String, msg: String },
    #[error("{path}: row {row}: column `{column}`: {msg}")]
    Row { path: String, row: usize, column: String, msg: String },
    #[error("{0}")]
    Usage(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Table file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Parquet,
    Jsonl,
}

impl Format {
    /// The format of a path, from its extension; `-` is JSONL.
    pub fn of(path: &str) -> Result<Format> {
        if path == "-" {
            return Ok(Format::Jsonl);
        }
        match Path::new(path).extension().and_then(|e| e.to_str()) {
            Some("parquet") | Some("pq") => Ok(Format::Parquet),
            Some("jsonl") | Some("ndjson") | Some("json") => Ok(Format::Jsonl),
            _ => Err(Error::Usage(format!(
                "{path}: unknown table format (use a .parquet or .jsonl file, or - for JSONL on stdin/stdout)"
            ))),
        }
    }
}
