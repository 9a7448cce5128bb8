//! Table I/O for every stage: Parquet and JSONL chosen by file extension, `-` for JSONL on
//! stdin/stdout, several files / directories / globs read as one table (shards), record batches
//! streamed, outputs written to a temp file in the target folder and renamed into place.
//!
//! Readers never assume a producer: a stage asks for the columns it uses by name and type
//! ([`Batch::column`]); compatible types (string views, narrower integers, …) are cast, a missing or
//! mistyped column is an error naming the file, and every other column is carried through.

#![forbid(unsafe_code)]

mod read;
mod write;

pub use read::{expand_inputs, read_rows, Batch, Input, Origins, Rows, TableReader};
pub use write::{widen, write_batches, TableWriter, WriteMeta};

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

/// What marks the file a stage that failed part-way keeps its finished rows in.
const PARTIAL: &str = ".partial";

/// Where a stage that fails part-way keeps the rows it finished: `DIR/NAME.partial.EXT` beside
/// its output `DIR/NAME.EXT` (same format; never the output itself, which stays all-or-nothing).
/// None for stdout. A folder read as one table skips such files.
pub fn partial_path(output: &str) -> Option<String> {
    if output == "-" {
        return None;
    }
    let p = Path::new(output);
    let name = match (p.file_stem().and_then(|s| s.to_str()), p.extension().and_then(|s| s.to_str())) {
        (Some(stem), Some(ext)) => format!("{stem}{PARTIAL}.{ext}"),
        _ => format!("{}{PARTIAL}", p.file_name()?.to_str()?),
    };
    Some(p.with_file_name(name).display().to_string())
}

/// Whether `p` is a file [`partial_path`] names.
pub(crate) fn is_partial(p: &Path) -> bool {
    p.file_stem().and_then(|s| s.to_str()).is_some_and(|s| s.ends_with(PARTIAL))
}

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
            _ => Err(Error::Usage(format!("{path}: unknown table format (use a .parquet or .jsonl file, or - for JSONL on stdin/stdout)"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{is_partial, partial_path};
    use std::path::Path;

    #[test]
    fn partial_files_sit_beside_the_output_in_its_format() {
        assert_eq!(partial_path("runs/x/rollouts.parquet").as_deref(), Some("runs/x/rollouts.partial.parquet"));
        assert_eq!(partial_path("out.jsonl").as_deref(), Some("out.partial.jsonl"));
        assert_eq!(partial_path("dir/table").as_deref(), Some("dir/table.partial"));
        assert_eq!(partial_path("-"), None);
        assert!(is_partial(Path::new("runs/x/rollouts.partial.parquet")));
        assert!(!is_partial(Path::new("runs/x/rollouts.parquet")));
    }
}
