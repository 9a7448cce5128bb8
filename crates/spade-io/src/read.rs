//! Reading tables: shards, globs, directories, stdin; schema unification; typed column access.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::sync::Arc;

use arrow::array::{new_null_array, Array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow::compute::{cast_with_options, CastOptions};
use arrow::datatypes::{DataType, Field, FieldRef, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder};
use serde::de::DeserializeOwned;
use serde_arrow::schema::{SchemaLike, TracingOptions};
use spade_schema::Table;

use crate::{Error, Format, Result};

const BATCH_ROWS: usize = 4096;

/// One table input: a file, or stdin (`-`, JSONL).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Stdin,
    File(PathBuf),
}

impl Input {
    pub fn display(&self) -> String {
        match self {
            Input::Stdin => "<stdin>".to_string(),
            Input::File(p) => p.display().to_string(),
        }
    }
}

/// A table file when found in a folder or by a glob: `.parquet`, `.jsonl`, `.ndjson`. A plain
/// `.json` file there is a document beside the tables (a summary, a configuration) and is skipped;
/// named explicitly it is read as JSON lines.
fn is_table_file(p: &std::path::Path) -> bool {
    // What a failed stage kept is never part of a folder's table.
    p.is_file() && !crate::is_partial(p) && Format::of(&p.to_string_lossy()).is_ok() && p.extension().is_none_or(|e| e != "json")
}

/// Expands table arguments into files: `-` is stdin, a directory is every table file directly in it
/// (sorted; `*.partial.*` files that failed stages kept are not part of it), a pattern with `*`, `?` or `[` is a glob (sorted); anything else must be an existing file.
pub fn expand_inputs<S: AsRef<str>>(args: &[S]) -> Result<Vec<Input>> {
    let mut out = Vec::new();
    for arg in args {
        let arg = arg.as_ref();
        if arg == "-" {
            out.push(Input::Stdin);
        } else if arg.contains(['*', '?', '[']) {
            let paths = glob::glob(arg).map_err(|e| Error::Usage(format!("{arg}: bad glob pattern: {e}")))?;
            let mut found: Vec<PathBuf> = paths.filter_map(|p| p.ok()).filter(|p| is_table_file(p)).collect();
            if found.is_empty() {
                return Err(Error::Usage(format!("{arg}: no table file matches this pattern")));
            }
            found.sort();
            out.extend(found.into_iter().map(Input::File));
        } else {
            let p = PathBuf::from(arg);
            if p.is_dir() {
                let mut found: Vec<PathBuf> = std::fs::read_dir(&p)
                    .map_err(|e| Error::Io { path: arg.to_string(), source: e })?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| is_table_file(p))
                    .collect();
                found.sort();
                if found.is_empty() {
                    return Err(Error::Usage(format!("{arg}: directory holds no .parquet or .jsonl file")));
                }
                out.extend(found.into_iter().map(Input::File));
            } else if p.exists() {
                Format::of(arg)?;
                out.push(Input::File(p));
            } else {
                return Err(Error::Io { path: arg.to_string(), source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file") });
            }
        }
    }
    Ok(out)
}

/// A batch with where it came from, for error messages.
#[derive(Debug, Clone)]
pub struct Batch {
    pub batch: RecordBatch,
    /// File the batch was read from.
    pub origin: Arc<str>,
    /// Index (0-based, within its file) of the batch's first row.
    pub first_row: usize,
}

impl Batch {
    pub fn num_rows(&self) -> usize {
        self.batch.num_rows()
    }

    /// The column `name` as `want`, casting compatible types; a missing or mistyped column is an
    /// error naming the file.
    pub fn column(&self, name: &str, want: &DataType) -> Result<ArrayRef> {
        let arr = self.batch.column_by_name(name).ok_or_else(|| Error::Column {
            path: self.origin.to_string(),
            column: name.to_string(),
            msg: "missing".to_string(),
        })?;
        conform(arr, want).map_err(|msg| Error::Column { path: self.origin.to_string(), column: name.to_string(), msg })
    }

    /// Like [`Batch::column`], but a column absent from the table gives `None`.
    pub fn opt_column(&self, name: &str, want: &DataType) -> Result<Option<ArrayRef>> {
        if self.batch.column_by_name(name).is_none() {
            return Ok(None);
        }
        self.column(name, want).map(Some)
    }

    /// The column `name` as `want`, required to have no null in any row.
    pub fn required(&self, name: &str, want: &DataType) -> Result<ArrayRef> {
        let arr = self.column(name, want)?;
        if arr.null_count() > 0 {
            let row = (0..arr.len()).find(|&i| arr.is_null(i)).unwrap_or(0);
            return Err(self.row_error(row, name, "is null"));
        }
        Ok(arr)
    }

    /// The batch's rows as `R`, read by `table`'s contract: each field of `R` is the column of its
    /// name, cast to the contract's type (a column the contract does not name is read as it is).
    /// `R` may be a table's row struct or a smaller struct with just the columns a reader uses; an
    /// `Option` field may be absent from the table. A missing required column, a null in a required
    /// column or a value `R` cannot hold is an error naming the file (and the row).
    pub fn rows<R: DeserializeOwned>(&self, table: &Table) -> Result<Vec<R>> {
        let opts = TracingOptions::default().allow_null_fields(true).enums_without_data_as_strings(true);
        let traced = Vec::<FieldRef>::from_type::<R>(opts)
            .map_err(|e| Error::Format { path: self.origin.to_string(), msg: format!("cannot read rows: {e}") })?;
        let mut fields = Vec::new();
        let mut cols = Vec::new();
        for f in &traced {
            let name = f.name();
            // An absent column is left to `R`: an `Option` or `#[serde(default)]` field takes it,
            // any other is a "missing" error below.
            let Some(arr) = self.batch.column_by_name(name) else {
                continue;
            };
            let arr = match table.column(name) {
                Some(c) => self.column(name, &c.ty.data_type())?,
                None => arr.clone(),
            };
            if !f.is_nullable() && arr.null_count() > 0 {
                let row = (0..arr.len()).find(|&i| arr.is_null(i)).unwrap_or(0);
                return Err(self.row_error(row, name, "is null"));
            }
            fields.push(Field::new(name, arr.data_type().clone(), true));
            cols.push(arr);
        }
        let schema = Arc::new(Schema::new(fields));
        let opts = RecordBatchOptions::new().with_row_count(Some(self.num_rows()));
        let batch = RecordBatch::try_new_with_options(schema, cols, &opts)
            .map_err(|e| Error::Format { path: self.origin.to_string(), msg: e.to_string() })?;
        serde_arrow::from_record_batch(&batch).map_err(|e| {
            // serde_arrow's message: `Error: deserialization failed: WHY (data_type: …, field: "$.COLUMN")`.
            let text = e.to_string();
            let column = text.split("field: \"$.").nth(1).and_then(|t| t.split('"').next()).unwrap_or("?").to_string();
            let why = text.trim_start_matches("Error: ").trim_start_matches("deserialization failed: ");
            let why = why.rfind(" (").map_or(why, |i| &why[..i]).to_string();
            if let Some(missing) = why.strip_prefix("missing field `").and_then(|m| m.strip_suffix('`')) {
                return Error::Column { path: self.origin.to_string(), column: missing.to_string(), msg: "missing".into() };
            }
            // The first row that does not read on its own.
            match (0..batch.num_rows()).find(|&i| serde_arrow::from_record_batch::<Vec<R>>(&batch.slice(i, 1)).is_err()) {
                Some(row) => self.row_error(row, &column, why),
                None => Error::Column { path: self.origin.to_string(), column, msg: why },
            }
        })
    }

    /// Where this batch's rows came from, for errors about them.
    pub fn origins(&self) -> Origins {
        Origins { spans: vec![(0, self.origin.clone(), self.first_row)] }
    }

    /// An error about row `row` (within this batch) of column `column`.
    pub fn row_error(&self, row: usize, column: &str, msg: impl Into<String>) -> Error {
        Error::Row { path: self.origin.to_string(), row: self.first_row + row + 1, column: column.to_string(), msg: msg.into() }
    }
}

/// Rows read from any number of batches, with where each came from.
#[derive(Debug, Clone)]
pub struct Rows<R> {
    pub rows: Vec<R>,
    pub origins: Origins,
}

/// Where each of a list of rows came from: file and row, for errors a library reports by index.
#[derive(Debug, Clone, Default)]
pub struct Origins {
    /// (index of the span's first row in the list, file, that row's index in its file).
    spans: Vec<(usize, Arc<str>, usize)>,
}

impl Origins {
    /// A library's error about row `e.index`, naming the file and the row within it.
    pub fn error(&self, e: spade_schema::RowError) -> Error {
        match self.spans.iter().rev().find(|(start, _, _)| *start <= e.index) {
            Some((start, path, first)) => {
                Error::Row { path: path.to_string(), row: first + e.index - start + 1, column: e.column.into(), msg: e.msg }
            }
            None => Error::Usage(e.to_string()),
        }
    }
}

/// Every row of the tables `args` name (none for no argument), read as `R` by `table`'s contract
/// ([`Batch::rows`]).
pub fn read_rows<R: DeserializeOwned, S: AsRef<str>>(args: &[S], table: &Table) -> Result<Rows<R>> {
    let mut out = Rows { rows: Vec::new(), origins: Origins::default() };
    if args.is_empty() {
        return Ok(out);
    }
    for b in TableReader::open(args)? {
        let b = b?;
        out.origins.spans.push((out.rows.len(), b.origin.clone(), b.first_row));
        out.rows.extend(b.rows::<R>(table)?);
    }
    Ok(out)
}

fn is_int(t: &DataType) -> bool {
    t.is_integer()
}

/// Whether `from` may be cast to `want` without changing meaning.
fn compatible(from: &DataType, want: &DataType) -> bool {
    use DataType::*;
    if from == want || *from == Null {
        return true;
    }
    match want {
        Utf8 | LargeUtf8 | Utf8View => {
            matches!(from, Utf8 | LargeUtf8 | Utf8View)
                || is_int(from)
                || matches!(from, Dictionary(_, v) if matches!(**v, Utf8 | LargeUtf8 | Utf8View))
        }
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 => is_int(from),
        Float16 | Float32 | Float64 => is_int(from) || from.is_floating(),
        List(w) | LargeList(w) => match from {
            List(f) | LargeList(f) | FixedSizeList(f, _) | ListView(f) | LargeListView(f) => compatible(f.data_type(), w.data_type()),
            _ => false,
        },
        _ => false,
    }
}

/// Casts `arr` to `want` if the types are compatible.
pub(crate) fn conform(arr: &ArrayRef, want: &DataType) -> std::result::Result<ArrayRef, String> {
    if arr.data_type() == want {
        return Ok(arr.clone());
    }
    if !compatible(arr.data_type(), want) {
        return Err(format!("has type {}, expected {}", arr.data_type(), want));
    }
    let opts = CastOptions { safe: false, ..Default::default() };
    cast_with_options(arr, want, &opts).map_err(|e| format!("cannot be read as {want}: {e}"))
}

/// Unifies two column types seen in different shards.
fn unify(a: &DataType, b: &DataType) -> Option<DataType> {
    use DataType::*;
    if a == b {
        return Some(a.clone());
    }
    match (a, b) {
        (Null, t) | (t, Null) => Some(t.clone()),
        (x, y) if is_int(x) && is_int(y) => Some(Int64),
        (x, y) if (is_int(x) || x.is_floating()) && (is_int(y) || y.is_floating()) => Some(Float64),
        (x, y) if matches!(x, Utf8 | LargeUtf8 | Utf8View) && matches!(y, Utf8 | LargeUtf8 | Utf8View) => Some(Utf8),
        (List(f), List(g)) => unify(f.data_type(), g.data_type()).map(|t| List(Arc::new(Field::new("item", t, true)))),
        _ => None,
    }
}

enum Source {
    Parquet(ParquetRecordBatchReader),
    Jsonl { lines: Box<dyn BufRead>, schema: SchemaRef, line: usize },
}

struct Opened {
    origin: Arc<str>,
    schema: SchemaRef,
    rows: usize,
    open: Box<dyn FnMut() -> Result<Source>>,
}

/// Reads one table from any number of shards, streaming record batches conformed to the union of
/// the shards' schemas (a column missing from a shard reads as nulls).
pub struct TableReader {
    schema: SchemaRef,
    rows: usize,
    pending: VecDeque<Opened>,
    current: Option<(Arc<str>, Source, usize)>,
}

impl TableReader {
    /// Opens table arguments (files, directories, globs, `-`); see [`expand_inputs`].
    pub fn open<S: AsRef<str>>(args: &[S]) -> Result<Self> {
        let inputs = expand_inputs(args)?;
        Self::from_inputs(inputs)
    }

    pub fn from_inputs(inputs: Vec<Input>) -> Result<Self> {
        let mut opened = Vec::new();
        for input in inputs {
            opened.push(open_input(input)?);
        }
        let mut fields: Vec<Field> = Vec::new();
        for o in &opened {
            for f in o.schema.fields() {
                match fields.iter_mut().find(|g| g.name() == f.name()) {
                    None => fields.push(Field::new(f.name(), f.data_type().clone(), true)),
                    Some(g) => {
                        let t = unify(g.data_type(), f.data_type()).ok_or_else(|| Error::Column {
                            path: o.origin.to_string(),
                            column: f.name().to_string(),
                            msg: format!("has type {} here but {} in an earlier shard", f.data_type(), g.data_type()),
                        })?;
                        *g = Field::new(f.name(), t, true);
                    }
                }
            }
        }
        let rows = opened.iter().map(|o| o.rows).sum();
        Ok(TableReader { schema: Arc::new(Schema::new(fields)), rows, pending: opened.into(), current: None })
    }

    /// The unified schema of all shards.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Total rows over all shards (known before reading).
    pub fn num_rows(&self) -> usize {
        self.rows
    }

    /// Checks that the table has the columns a stage needs, with compatible types. A table with no
    /// rows passes whatever its columns (an empty input is not an error).
    pub fn require(&self, columns: &[(&str, DataType)]) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let origin = self.origin_of_first();
        for (name, want) in columns {
            match self.schema.field_with_name(name) {
                Err(_) => return Err(Error::Column { path: origin.clone(), column: name.to_string(), msg: "missing".into() }),
                Ok(f) if !compatible(f.data_type(), want) => {
                    return Err(Error::Column {
                        path: origin.clone(),
                        column: name.to_string(),
                        msg: format!("has type {}, expected {}", f.data_type(), want),
                    })
                }
                Ok(_) => {}
            }
        }
        Ok(())
    }

    fn origin_of_first(&self) -> String {
        match (&self.current, self.pending.len()) {
            (Some((o, _, _)), _) => o.to_string(),
            (None, 0) => "<input>".to_string(),
            (None, 1) => self.pending[0].origin.to_string(),
            (None, n) => format!("{} (and {} more shards)", self.pending[0].origin, n - 1),
        }
    }

    /// Reads every batch (for tables small enough to hold: candidates, scores, memory).
    pub fn read_all(self) -> Result<Vec<Batch>> {
        self.collect()
    }

    fn conform_batch(&self, origin: &Arc<str>, b: RecordBatch) -> Result<RecordBatch> {
        let cols = self
            .schema
            .fields()
            .iter()
            .map(|f| match b.column_by_name(f.name()) {
                Some(c) => conform(c, f.data_type()).map_err(|msg| Error::Column { path: origin.to_string(), column: f.name().to_string(), msg }),
                None => Ok(new_null_array(f.data_type(), b.num_rows())),
            })
            .collect::<Result<Vec<_>>>()?;
        RecordBatch::try_new(self.schema.clone(), cols).map_err(|e| Error::Format { path: origin.to_string(), msg: e.to_string() })
    }

    fn next_raw(&mut self) -> Option<Result<(Arc<str>, RecordBatch, usize)>> {
        loop {
            if self.current.is_none() {
                let mut o = self.pending.pop_front()?;
                match (o.open)() {
                    Ok(src) => self.current = Some((o.origin.clone(), src, 0)),
                    Err(e) => return Some(Err(e)),
                }
            }
            let (origin, src, row) = self.current.as_mut().unwrap();
            let origin = origin.clone();
            let got = match src {
                Source::Parquet(r) => {
                    r.next().map(|b| b.map_err(|e| Error::Format { path: origin.to_string(), msg: format!("invalid Parquet data: {e}") }))
                }
                Source::Jsonl { lines, schema, line } => read_jsonl_batch(&origin, lines, schema, line).transpose(),
            };
            match got {
                None => self.current = None,
                Some(Err(e)) => {
                    self.current = None;
                    self.pending.clear();
                    return Some(Err(e));
                }
                Some(Ok(b)) => {
                    let first = *row;
                    *row += b.num_rows();
                    return Some(Ok((origin, b, first)));
                }
            }
        }
    }
}

impl Iterator for TableReader {
    type Item = Result<Batch>;

    fn next(&mut self) -> Option<Self::Item> {
        let (origin, b, first_row) = match self.next_raw()? {
            Ok(x) => x,
            Err(e) => return Some(Err(e)),
        };
        Some(self.conform_batch(&origin, b).map(|batch| Batch { batch, origin, first_row }))
    }
}

fn io_err(path: &str, e: std::io::Error) -> Error {
    Error::Io { path: path.to_string(), source: e }
}

fn open_input(input: Input) -> Result<Opened> {
    let (path, display) = match &input {
        Input::Stdin => {
            // JSONL on stdin is spooled to a temp file: the schema pass needs to read it twice.
            let mut tmp = tempfile::NamedTempFile::new().map_err(|e| io_err("<stdin>", e))?;
            std::io::copy(&mut std::io::stdin().lock(), &mut tmp).map_err(|e| io_err("<stdin>", e))?;
            let (_, p) = tmp.keep().map_err(|e| io_err("<stdin>", e.error))?;
            // Unlink now; the open below happens through a kept handle.
            (p, "<stdin>".to_string())
        }
        Input::File(p) => (p.clone(), p.display().to_string()),
    };
    let origin: Arc<str> = Arc::from(display.as_str());
    let format = if input == Input::Stdin { Format::Jsonl } else { Format::of(&display)? };
    match format {
        Format::Parquet => {
            let file = File::open(&path).map_err(|e| io_err(&display, e))?;
            let builder = ParquetRecordBatchReaderBuilder::try_new(file)
                .map_err(|e| Error::Format { path: display.clone(), msg: format!("not a valid Parquet file: {e}") })?;
            let schema = builder.schema().clone();
            let rows = builder.metadata().file_metadata().num_rows() as usize;
            let p = path.clone();
            let d = display.clone();
            Ok(Opened {
                origin,
                schema,
                rows,
                open: Box::new(move || {
                    let file = File::open(&p).map_err(|e| io_err(&d, e))?;
                    let r = ParquetRecordBatchReaderBuilder::try_new(file)
                        .and_then(|b| b.with_batch_size(BATCH_ROWS).build())
                        .map_err(|e| Error::Format { path: d.clone(), msg: format!("not a valid Parquet file: {e}") })?;
                    Ok(Source::Parquet(r))
                }),
            })
        }
        Format::Jsonl => {
            let file = File::open(&path).map_err(|e| io_err(&display, e))?;
            if input == Input::Stdin {
                let _ = std::fs::remove_file(&path);
            }
            let (schema, rows) = infer_jsonl(&display, BufReader::new(file.try_clone().map_err(|e| io_err(&display, e))?))?;
            let schema = Arc::new(schema);
            let d = display.clone();
            let mut file = Some(file);
            Ok(Opened {
                origin,
                schema: schema.clone(),
                rows,
                open: Box::new(move || {
                    let mut f = file.take().expect("a JSONL shard is opened once");
                    use std::io::Seek;
                    f.seek(std::io::SeekFrom::Start(0)).map_err(|e| io_err(&d, e))?;
                    Ok(Source::Jsonl { lines: Box::new(BufReader::new(f)), schema: schema.clone(), line: 0 })
                }),
            })
        }
    }
}

fn parse_line(path: &str, line_no: usize, line: &str) -> Result<serde_json::Value> {
    let v: serde_json::Value =
        serde_json::from_str(line).map_err(|e| Error::Line { path: path.to_string(), line: line_no, msg: format!("invalid JSON: {e}") })?;
    if !v.is_object() {
        return Err(Error::Line { path: path.to_string(), line: line_no, msg: "expected a JSON object".into() });
    }
    Ok(v)
}

/// First pass over a JSONL file: checks every line and infers the schema, keeping nothing else.
fn infer_jsonl(path: &str, reader: impl Read) -> Result<(Schema, usize)> {
    let mut rows = 0usize;
    let mut err = None;
    let reader = BufReader::new(reader);
    let iter = reader.lines().enumerate().filter_map(|(i, l)| {
        if err.is_some() {
            return None;
        }
        let l = match l {
            Ok(l) => l,
            Err(e) => {
                err = Some(Error::Line { path: path.to_string(), line: i + 1, msg: e.to_string() });
                return None;
            }
        };
        if l.trim().is_empty() {
            return None;
        }
        match parse_line(path, i + 1, &l) {
            Ok(v) => {
                rows += 1;
                Some(Ok::<_, arrow::error::ArrowError>(v))
            }
            Err(e) => {
                err = Some(e);
                None
            }
        }
    });
    let schema = arrow_json_infer(iter);
    if let Some(e) = err {
        return Err(e);
    }
    let schema = schema.map_err(|e| Error::Format { path: path.to_string(), msg: format!("cannot infer a schema: {e}") })?;
    Ok((schema, rows))
}

fn arrow_json_infer<I: Iterator<Item = std::result::Result<serde_json::Value, arrow::error::ArrowError>>>(
    iter: I,
) -> std::result::Result<Schema, arrow::error::ArrowError> {
    arrow::json::reader::infer_json_schema_from_iterator(iter)
}

fn decode(schema: &SchemaRef, values: &[serde_json::Value]) -> std::result::Result<Option<RecordBatch>, String> {
    let mut d = arrow::json::ReaderBuilder::new(schema.clone()).with_batch_size(values.len().max(1)).build_decoder().map_err(|e| e.to_string())?;
    d.serialize(values).map_err(|e| e.to_string())?;
    d.flush().map_err(|e| e.to_string())
}

fn read_jsonl_batch(path: &str, lines: &mut Box<dyn BufRead>, schema: &SchemaRef, line_no: &mut usize) -> Result<Option<RecordBatch>> {
    let mut values = Vec::with_capacity(BATCH_ROWS);
    let mut first_line = Vec::with_capacity(BATCH_ROWS);
    let mut buf = String::new();
    while values.len() < BATCH_ROWS {
        buf.clear();
        let n = lines.read_line(&mut buf).map_err(|e| io_err(path, e))?;
        if n == 0 {
            break;
        }
        *line_no += 1;
        if buf.trim().is_empty() {
            continue;
        }
        values.push(parse_line(path, *line_no, buf.trim_end())?);
        first_line.push(*line_no);
    }
    if values.is_empty() {
        return Ok(None);
    }
    match decode(schema, &values) {
        Ok(b) => Ok(b),
        Err(batch_err) => {
            // Find the offending line for the message.
            for (v, l) in values.iter().zip(&first_line) {
                if let Err(e) = decode(schema, std::slice::from_ref(v)) {
                    return Err(Error::Line { path: path.to_string(), line: *l, msg: e });
                }
            }
            Err(Error::Format { path: path.to_string(), msg: batch_err })
        }
    }
}

#[cfg(test)]
mod rows_tests {
    use arrow::array::{Int64Array, StringArray};
    use serde::Deserialize;
    use spade_schema::{Arm, ROLLOUTS};

    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Play {
        env_id: String,
        arm: Arm,
        episode: i32,
        status: Option<String>,
    }

    fn batch(cols: Vec<(&str, ArrayRef)>) -> Batch {
        Batch { batch: RecordBatch::try_from_iter(cols).unwrap(), origin: "r.parquet".into(), first_row: 10 }
    }

    #[test]
    fn rows_are_read_by_the_contract_and_errors_name_file_row_and_column() {
        let env: ArrayRef = Arc::new(StringArray::from(vec!["a", "b"]));
        // Int64 where the contract says int32: cast, as columns are.
        let ep: ArrayRef = Arc::new(Int64Array::from(vec![0, 1]));
        let b = batch(vec![("env_id", env.clone()), ("arm", Arc::new(StringArray::from(vec!["hint", "nohint"]))), ("episode", ep.clone())]);
        let rows: Vec<Play> = b.rows(&ROLLOUTS).unwrap();
        assert_eq!(rows[1], Play { env_id: "b".into(), arm: Arm::NoHint, episode: 1, status: None });

        let e = batch(vec![("env_id", env.clone()), ("episode", ep.clone())]).rows::<Play>(&ROLLOUTS).unwrap_err();
        assert_eq!(e.to_string(), "r.parquet: column `arm`: missing");
        let arm: ArrayRef = Arc::new(StringArray::from(vec![Some("hint"), None]));
        let e = batch(vec![("env_id", env.clone()), ("arm", arm), ("episode", ep.clone())]).rows::<Play>(&ROLLOUTS).unwrap_err();
        assert_eq!(e.to_string(), "r.parquet: row 12: column `arm`: is null");
        let arm: ArrayRef = Arc::new(StringArray::from(vec!["hint", "sometimes"]));
        let e = batch(vec![("env_id", env), ("arm", arm), ("episode", ep)]).rows::<Play>(&ROLLOUTS).unwrap_err().to_string();
        assert_eq!(e, "r.parquet: row 12: column `arm`: unknown variant `sometimes`, expected one of `hint`, `no-hint`, `nohint`");
    }

    #[test]
    fn memory_defaults_cover_absent_columns_and_null_cells_and_settings_read_leniently() {
        use arrow::array::Float64Array;
        use spade_schema::{Label, MemoryRow, Setting, MEMORY};
        let s = |v: Vec<Option<&str>>| -> ArrayRef { Arc::new(StringArray::from(v)) };
        let b = batch(vec![
            ("env_id", s(vec![Some("a"), Some("b")])),
            ("code", s(vec![Some("x"), Some("y")])),
            ("label", s(vec![Some("seed"), None])),
            ("plays_hint", Arc::new(Int64Array::from(vec![Some(3), None]))),
            ("sum_hint", Arc::new(Float64Array::from(vec![None, Some(1.5)]))),
            ("setting", s(vec![Some("Tool-Use"), Some("chess")])),
        ]);
        let rows: Vec<MemoryRow> = b.rows(&MEMORY).unwrap();
        assert_eq!((rows[0].label, rows[0].plays_hint, rows[0].sum_hint, rows[0].setting), (Label::Seed, 3, 0.0, Some(Setting::ToolUse)));
        assert_eq!((rows[1].label, rows[1].plays_hint, rows[1].sum_hint, rows[1].setting), (Label::Unlabelled, 0, 1.5, Some(Setting::Games)));
        assert_eq!((rows[0].wins_hint, rows[0].first_round), (0, 0), "absent columns");
    }
}
