//! The tables open in pyarrow and DuckDB with no spade code.

use crate::util::*;

#[test]
fn tables_open_in_pyarrow_and_duckdb() {
    let d = tmp();
    let corpus = d.path().join("c.jsonl");
    write_jsonl(&corpus, &corpus_rows(&[("math", 20), ("code", 20)], 12));
    let docs = d.path().join("docs.parquet");
    stage("spade-sample-corpus").arg(&corpus).args(["--mix", "math=3,code=4", "--seed", "5", "-o"]).arg(&docs).assert().success();
    // Every contract, empty, with its full schema.
    for t in spade_schema::TABLES {
        let p = d.path().join(format!("empty-{}.parquet", t.name));
        spade_io::write_batches(p.to_str().unwrap(), t.schema(), &[], &spade_io::WriteMeta::new(t.name)).unwrap();
    }
    let script = r#"
import sys, glob, json, pyarrow.parquet as pq, duckdb
d = sys.argv[1]
t = pq.read_table(f"{d}/docs.parquet")
assert t.num_rows == 7, t.num_rows
md = t.schema.metadata
assert md[b"spade.table"] == b"docs" and md[b"spade.seed"] == b"5", md
assert json.loads(md[b"spade.config"])["mix"] == "math=3,code=4"
con = duckdb.connect()
rows = con.execute(f"select domain, count(*) from read_parquet('{d}/docs.parquet') group by domain order by domain").fetchall()
assert rows == [("code", 4), ("math", 3)], rows
for p in sorted(glob.glob(f"{d}/empty-*.parquet")):
    e = pq.read_table(p)
    assert e.num_rows == 0 and len(e.schema) > 0, p
    assert con.execute(f"select count(*) from read_parquet('{p}')").fetchone()[0] == 0
print("ok", len(glob.glob(f"{d}/empty-*.parquet")))
"#;
    let out = std::process::Command::new(python()).arg("-c").arg(script).arg(d.path()).output().unwrap();
    assert!(out.status.success(), "python failed: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("ok {}", spade_schema::TABLES.len()));
}
