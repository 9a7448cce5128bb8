//! Table I/O: schema round-trips (property tests), shards and globs, malformed inputs, atomic writes.

use std::sync::Arc;

use arrow::array::*;
use arrow::datatypes::DataType;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use spade_io::{TableReader, TableWriter, WriteMeta};
use spade_schema::TABLES;

use crate::util::*;

fn random_array(rng: &mut rand_chacha::ChaCha8Rng, t: &DataType, nullable: bool, n: usize) -> ArrayRef {
    let null = |rng: &mut rand_chacha::ChaCha8Rng| nullable && rng.random_bool(0.2);
    macro_rules! prim {
        ($arr:ty, $gen:expr) => {
            Arc::new((0..n).map(|_| if null(rng) { None } else { Some($gen(&mut *rng)) }).collect::<$arr>())
        };
    }
    match t {
        DataType::Utf8 => Arc::new((0..n).map(|_| if null(rng) { None } else { Some(random_string(rng)) }).collect::<StringArray>()),
        DataType::Int32 => prim!(Int32Array, |r: &mut rand_chacha::ChaCha8Rng| r.random_range(-1000..1000)),
        DataType::Int64 => prim!(Int64Array, |r: &mut rand_chacha::ChaCha8Rng| r.random::<i64>() >> 12),
        DataType::Float32 => prim!(Float32Array, |r: &mut rand_chacha::ChaCha8Rng| r.random_range(-30.0f32..30.0)),
        DataType::Float64 => prim!(Float64Array, |r: &mut rand_chacha::ChaCha8Rng| r.random_range(-1e6..1e6)),
        DataType::Boolean => prim!(BooleanArray, |r: &mut rand_chacha::ChaCha8Rng| r.random_bool(0.5)),
        DataType::List(f) => {
            let mut lens = vec![0i32];
            let mut valid = Vec::new();
            for _ in 0..n {
                let is_null = null(rng);
                valid.push(!is_null);
                let l = if is_null { 0 } else { rng.random_range(0..6) };
                lens.push(lens.last().unwrap() + l);
            }
            let total = *lens.last().unwrap() as usize;
            let values = random_array(rng, f.data_type(), false, total);
            Arc::new(ListArray::new(f.clone(), arrow::buffer::OffsetBuffer::new(lens.into()), values, Some(arrow::buffer::NullBuffer::from(valid))))
        }
        DataType::UInt8 => prim!(UInt8Array, |r: &mut rand_chacha::ChaCha8Rng| r.random_range(0..2u8)),
        other => panic!("no generator for {other}"),
    }
}

fn random_string(rng: &mut rand_chacha::ChaCha8Rng) -> String {
    const PIECES: &[&str] = &["a", "Zq", " ", "é", "\n", "\"", "\\", "{}", "λ", "0", "\t", "🙂", "def f():"];
    (0..rng.random_range(0..8)).map(|_| PIECES[rng.random_range(0..PIECES.len())]).collect()
}

fn random_table(table: &spade_schema::Table, seed: u64, rows: usize) -> RecordBatch {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let schema = table.schema();
    let cols = schema.fields().iter().map(|f| random_array(&mut rng, f.data_type(), f.is_nullable(), rows)).collect();
    RecordBatch::try_new(schema, cols).unwrap()
}

fn read_back(path: &str, table: &spade_schema::Table) -> Vec<RecordBatch> {
    let reader = TableReader::open(&[path]).unwrap();
    let schema = table.schema();
    reader
        .map(|b| {
            let b = b.unwrap();
            let cols = schema.fields().iter().map(|f| b.column(f.name(), f.data_type()).unwrap()).collect();
            RecordBatch::try_new(schema.clone(), cols).unwrap()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn every_table_round_trips_through_parquet_and_jsonl(seed in any::<u64>(), rows in 1usize..40) {
        let d = tmp();
        for table in TABLES {
            let batch = random_table(table, seed, rows);
            for ext in ["parquet", "jsonl"] {
                let path = d.path().join(format!("{}.{ext}", table.name));
                let path = path.to_str().unwrap();
                spade_io::write_batches(path, table.schema(), std::slice::from_ref(&batch), &WriteMeta::new(table.name)).unwrap();
                let back = read_back(path, table);
                let back = arrow::compute::concat_batches(&table.schema(), &back).unwrap();
                for (i, f) in table.schema().fields().iter().enumerate() {
                    prop_assert_eq!(back.column(i).to_data(), batch.column(i).to_data(), "{}.{} via {}", table.name, f.name(), ext);
                }
            }
        }
    }
}

#[test]
fn parquet_records_schema_version_seed_and_config() {
    let d = tmp();
    let path = d.path().join("docs.parquet");
    let meta = WriteMeta { table: "docs".into(), seed: Some(42), config: Some(serde_json::json!({"n": 3})), tool: None };
    spade_io::write_batches(path.to_str().unwrap(), spade_schema::DOCS.schema(), &[], &meta).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let r = parquet::file::reader::SerializedFileReader::new(file).unwrap();
    use parquet::file::reader::FileReader;
    let kv = r.metadata().file_metadata().key_value_metadata().unwrap().clone();
    let get = |k: &str| kv.iter().find(|e| e.key == k).and_then(|e| e.value.clone());
    assert_eq!(get("spade.schema_version").as_deref(), Some(spade_schema::SCHEMA_VERSION));
    assert_eq!(get("spade.seed").as_deref(), Some("42"));
    assert_eq!(get("spade.table").as_deref(), Some("docs"));
    assert_eq!(get("spade.config").as_deref(), Some("{\"n\":3}"));
}

#[test]
fn empty_table_keeps_its_schema_in_parquet() {
    let d = tmp();
    let path = d.path().join("rollouts.parquet");
    let p = path.to_str().unwrap();
    spade_io::write_batches(p, spade_schema::ROLLOUTS.schema(), &[], &WriteMeta::new("rollouts")).unwrap();
    let r = TableReader::open(&[p]).unwrap();
    assert_eq!(r.num_rows(), 0);
    let names: Vec<_> = r.schema().fields().iter().map(|f| f.name().clone()).collect();
    let want: Vec<_> = spade_schema::ROLLOUTS.columns.iter().map(|c| c.name.to_string()).collect();
    assert_eq!(names, want);
}

#[test]
fn shards_glob_and_folder_read_as_one_table_with_missing_columns_null() {
    let d = tmp();
    write_jsonl(&d.path().join("a.jsonl"), &[serde_json::json!({"id": "1", "text": "x", "extra": 5})]);
    let b = RecordBatch::try_from_iter(vec![
        ("id", Arc::new(StringArray::from(vec!["2", "3"])) as ArrayRef),
        ("text", Arc::new(StringArray::from(vec!["y", "z"])) as ArrayRef),
    ])
    .unwrap();
    let pq = d.path().join("b.parquet");
    spade_io::write_batches(pq.to_str().unwrap(), b.schema(), &[b], &WriteMeta::new("t")).unwrap();
    std::fs::write(d.path().join("notes.txt"), "not a table").unwrap();
    // a summary document beside the shards (as spade-eval writes) is not a shard
    std::fs::write(d.path().join("b.parquet.summary.json"), "{\"suites\": {}}").unwrap();
    // nor are the rows a failed stage kept (`NAME.partial.EXT`)
    write_jsonl(&d.path().join("c.partial.jsonl"), &[serde_json::json!({"id": "4", "text": "w"})]);
    for arg in [format!("{}/*", d.path().display()), d.path().display().to_string()] {
        let r = TableReader::open(&[arg.as_str()]).unwrap();
        assert_eq!(r.num_rows(), 3);
        let batches: Vec<_> = r.map(|b| b.unwrap()).collect();
        let extra = batches[1].column("extra", &DataType::Int64).unwrap();
        assert_eq!(extra.null_count(), 2, "a column missing from a shard reads as nulls");
        assert_eq!(batches[0].column("extra", &DataType::Int64).unwrap().as_any().downcast_ref::<Int64Array>().unwrap().value(0), 5);
    }
}

#[test]
fn malformed_inputs_name_the_file_and_line() {
    let d = tmp();
    let bad = d.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"id\": \"1\", \"text\": \"a\"}\n{\"id\": \"2\", \"text\": \n").unwrap();
    let e = TableReader::open(&[bad.to_str().unwrap()]).err().unwrap().to_string();
    assert!(e.contains("bad.jsonl: line 2: invalid JSON"), "{e}");

    let arr = d.path().join("arr.jsonl");
    std::fs::write(&arr, "[1, 2]\n").unwrap();
    let e = TableReader::open(&[arr.to_str().unwrap()]).err().unwrap().to_string();
    assert!(e.contains("arr.jsonl: line 1: expected a JSON object"), "{e}");

    let missing = d.path().join("missing.parquet");
    let e = TableReader::open(&[missing.to_str().unwrap()]).err().unwrap().to_string();
    assert!(e.contains("missing.parquet") && e.contains("no such file"), "{e}");

    let truncated = d.path().join("trunc.parquet");
    let b = RecordBatch::try_from_iter(vec![("id", Arc::new(StringArray::from(vec!["a"; 100])) as ArrayRef)]).unwrap();
    spade_io::write_batches(truncated.to_str().unwrap(), b.schema(), &[b], &WriteMeta::new("t")).unwrap();
    let bytes = std::fs::read(&truncated).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let e = TableReader::open(&[truncated.to_str().unwrap()]).err().unwrap().to_string();
    assert!(e.contains("trunc.parquet: not a valid Parquet file"), "{e}");

    let other = d.path().join("t.csv");
    std::fs::write(&other, "a,b\n").unwrap();
    let e = TableReader::open(&[other.to_str().unwrap()]).err().unwrap().to_string();
    assert!(e.contains("t.csv: unknown table format"), "{e}");
}

#[test]
fn wrong_column_type_is_named() {
    let d = tmp();
    let p = d.path().join("r.jsonl");
    write_jsonl(&p, &[serde_json::json!({"env_id": "e", "arm": "hint", "return": "high"})]);
    let r = TableReader::open(&[p.to_str().unwrap()]).unwrap();
    let e = r.require(&[("env_id", DataType::Utf8), ("return", DataType::Float64)]).err().unwrap().to_string();
    assert!(e.contains("r.jsonl: column `return`: has type Utf8, expected Float64"), "{e}");
    let e = r.require(&[("arm", DataType::Utf8), ("episode", DataType::Int32)]).err().unwrap().to_string();
    assert!(e.contains("column `episode`: missing"), "{e}");
}

#[test]
fn unfinished_writer_leaves_no_file() {
    let d = tmp();
    let path = d.path().join("out.parquet");
    {
        let b = random_table(&spade_schema::DOCS, 1, 10);
        let mut w = TableWriter::create(path.to_str().unwrap(), b.schema(), &WriteMeta::new("docs")).unwrap();
        w.write(&b).unwrap();
        assert!(!path.exists(), "nothing at the output path before finish");
    }
    assert!(files_in(d.path()).is_empty(), "the temp file is removed on drop: {:?}", files_in(d.path()));
}

/// Child half of `killed_writer_leaves_no_output`: writes a batch, says so, then waits to be killed.
#[test]
fn killed_writer_child() {
    let Ok(dir) = std::env::var("SPADE_TEST_KILL_DIR") else { return };
    let path = std::path::Path::new(&dir).join("out.parquet");
    let b = random_table(&spade_schema::DOCS, 1, 1000);
    let mut w = TableWriter::create(path.to_str().unwrap(), b.schema(), &WriteMeta::new("docs")).unwrap();
    w.write(&b).unwrap();
    std::fs::write(std::path::Path::new(&dir).join("ready"), "").unwrap();
    std::thread::sleep(std::time::Duration::from_secs(60));
    w.finish().unwrap();
}

#[test]
fn killed_writer_leaves_no_output() {
    let d = tmp();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "io::killed_writer_child", "--nocapture", "--test-threads=1"])
        .env("SPADE_TEST_KILL_DIR", d.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let ready = d.path().join("ready");
    let t0 = std::time::Instant::now();
    while !ready.exists() {
        assert!(t0.elapsed().as_secs() < 30, "child never got ready");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(!d.path().join("out.parquet").exists(), "a killed writer left an output file");
}
