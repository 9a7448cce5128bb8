//! Writing tables atomically: a temp file in the target folder, renamed into place on `finish`.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, RecordBatch, RecordBatchOptions, UInt32Array};
use arrow::datatypes::{Field, Schema, SchemaRef};
use arrow::json::writer::{LineDelimited, WriterBuilder};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;

use crate::{Error, Format, Result};

/// What is recorded with a table: its contract name, the seed and the full configuration of the run.
#[derive(Debug, Clone, Default)]
pub struct WriteMeta {
    pub table: String,
    pub seed: Option<u64>,
    pub config: Option<serde_json::Value>,
    pub tool: Option<String>,
}

impl WriteMeta {
    pub fn new(table: &str) -> Self {
        WriteMeta { table: table.to_string(), ..Default::default() }
    }

    fn key_values(&self) -> Vec<KeyValue> {
        use spade_schema::meta;
        let mut kv = vec![
            KeyValue::new(meta::SCHEMA_VERSION.to_string(), spade_schema::SCHEMA_VERSION.to_string()),
            KeyValue::new(meta::TABLE.to_string(), self.table.clone()),
        ];
        if let Some(s) = self.seed {
            kv.push(KeyValue::new(meta::SEED.to_string(), s.to_string()));
        }
        if let Some(c) = &self.config {
            kv.push(KeyValue::new(meta::CONFIG.to_string(), c.to_string()));
        }
        if let Some(t) = &self.tool {
            kv.push(KeyValue::new(meta::TOOL.to_string(), t.clone()));
        }
        kv
    }

    /// The metadata as a schema-level map (also stored in the Arrow schema inside Parquet files).
    pub fn as_map(&self) -> HashMap<String, String> {
        self.key_values().into_iter().filter_map(|kv| kv.value.map(|v| (kv.key, v))).collect()
    }
}

type JsonlWriter<W> = arrow::json::Writer<W, LineDelimited>;

enum Sink {
    Parquet(ArrowWriter<File>),
    Jsonl(JsonlWriter<BufWriter<File>>),
    Stdout(JsonlWriter<BufWriter<std::io::Stdout>>),
}

/// A table being written. Nothing appears at the output path until [`TableWriter::finish`]; a writer
/// dropped or killed before that leaves no output file (its hidden temp file is removed on drop).
pub struct TableWriter {
    sink: Option<Sink>,
    tmp: Option<tempfile::NamedTempFile>,
    path: String,
    schema: SchemaRef,
    rows: usize,
}

fn jsonl<W: Write>(w: W) -> JsonlWriter<W> {
    WriterBuilder::new().with_explicit_nulls(true).build::<W, LineDelimited>(w)
}

impl TableWriter {
    /// Starts writing a table to `path` (`-` = JSONL on stdout); the format follows the extension.
    /// Parent folders are created.
    pub fn create(path: &str, schema: SchemaRef, meta: &WriteMeta) -> Result<Self> {
        let format = Format::of(path)?;
        let schema = if format == Format::Parquet {
            let mut md = schema.metadata().clone();
            md.extend(meta.as_map());
            std::sync::Arc::new(schema.as_ref().clone().with_metadata(md))
        } else {
            schema
        };
        if path == "-" {
            let sink = Sink::Stdout(jsonl(BufWriter::new(std::io::stdout())));
            return Ok(TableWriter { sink: Some(sink), tmp: None, path: path.into(), schema, rows: 0 });
        }
        let target = PathBuf::from(path);
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir).map_err(|e| Error::Io { path: dir.display().to_string(), source: e })?;
        let name = target.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_default();
        spade_schema::temps::remove_dead_temps(&dir, &name);
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}.{}.", std::process::id()))
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(|e| Error::Io { path: path.into(), source: e })?;
        let file = tmp.as_file().try_clone().map_err(|e| Error::Io { path: path.into(), source: e })?;
        let sink = match format {
            Format::Parquet => {
                let props = WriterProperties::builder()
                    .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).expect("valid zstd level")))
                    .set_key_value_metadata(Some(meta.key_values()))
                    .build();
                Sink::Parquet(
                    ArrowWriter::try_new(file, schema.clone(), Some(props)).map_err(|e| Error::Format { path: path.into(), msg: e.to_string() })?,
                )
            }
            Format::Jsonl => Sink::Jsonl(jsonl(BufWriter::new(file))),
        };
        Ok(TableWriter { sink: Some(sink), tmp: Some(tmp), path: path.into(), schema, rows: 0 })
    }

    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn err(&self, e: impl std::fmt::Display) -> Error {
        Error::Format { path: self.path.clone(), msg: e.to_string() }
    }

    /// Appends a batch; its columns must match the writer's schema by position and type.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        let batch = if batch.schema().metadata() != self.schema.metadata() {
            RecordBatch::try_new(self.schema.clone(), batch.columns().to_vec()).map_err(|e| self.err(e))?
        } else {
            batch.clone()
        };
        let r = match self.sink.as_mut().expect("writer used after finish") {
            Sink::Parquet(w) => w.write(&batch).map_err(|e| e.to_string()),
            Sink::Jsonl(w) => w.write(&batch).map_err(|e| e.to_string()),
            Sink::Stdout(w) => w.write(&batch).map_err(|e| e.to_string()),
        };
        r.map_err(|e| self.err(e))?;
        self.rows += batch.num_rows();
        Ok(())
    }

    /// Rows written so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Flushes, syncs and renames the table into place; returns the number of rows.
    pub fn finish(mut self) -> Result<usize> {
        let path = self.path.clone();
        match self.sink.take().expect("finish called once") {
            Sink::Parquet(w) => {
                let f = w.into_inner().map_err(|e| Error::Format { path: path.clone(), msg: e.to_string() })?;
                f.sync_all().map_err(|e| Error::Io { path: path.clone(), source: e })?;
            }
            Sink::Jsonl(mut w) => {
                w.finish().map_err(|e| Error::Format { path: path.clone(), msg: e.to_string() })?;
                let f = w.into_inner().into_inner().map_err(|e| Error::Io { path: path.clone(), source: e.into_error() })?;
                f.sync_all().map_err(|e| Error::Io { path: path.clone(), source: e })?;
            }
            Sink::Stdout(mut w) => {
                w.finish().map_err(|e| Error::Format { path: path.clone(), msg: e.to_string() })?;
                w.into_inner().flush().map_err(|e| Error::Io { path: path.clone(), source: e })?;
                return Ok(self.rows);
            }
        }
        let tmp = self.tmp.take().expect("file sink has a temp file");
        tmp.persist(Path::new(&path)).map_err(|e| Error::Io { path: path.clone(), source: e.error })?;
        Ok(self.rows)
    }
}

/// Writes whole batches as one table (atomically).
pub fn write_batches(path: &str, schema: SchemaRef, batches: &[RecordBatch], meta: &WriteMeta) -> Result<usize> {
    let mut w = TableWriter::create(path, schema, meta)?;
    for b in batches {
        w.write(b)?;
    }
    w.finish()
}

/// `base`'s columns, then those of each of `extras`, then the columns of `carried` (its rows at
/// `take`, in that order) whose names are not yet there, made nullable: a stage's contract columns,
/// its own extra columns, and its input's other columns carried through.
pub fn widen(base: &RecordBatch, extras: &[&RecordBatch], carried: Option<(&RecordBatch, &[usize])>) -> Result<RecordBatch> {
    let mut fields: Vec<Field> = base.schema().fields().iter().map(|f| f.as_ref().clone()).collect();
    let mut cols: Vec<ArrayRef> = base.columns().to_vec();
    for b in extras {
        for (f, c) in b.schema().fields().iter().zip(b.columns()) {
            if !fields.iter().any(|g| g.name() == f.name()) {
                fields.push(f.as_ref().clone());
                cols.push(c.clone());
            }
        }
    }
    if let Some((batch, take)) = carried {
        let take = UInt32Array::from(take.iter().map(|&i| i as u32).collect::<Vec<_>>());
        for (f, col) in batch.schema().fields().iter().zip(batch.columns()) {
            if fields.iter().any(|g| g.name() == f.name()) {
                continue;
            }
            fields.push(Field::new(f.name(), f.data_type().clone(), true));
            cols.push(arrow::compute::take(col.as_ref(), &take, None).map_err(|e| Error::Usage(e.to_string()))?);
        }
    }
    let opts = RecordBatchOptions::new().with_row_count(Some(base.num_rows()));
    RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), cols, &opts).map_err(|e| Error::Usage(e.to_string()))
}
