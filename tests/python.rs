//! The tables open in pyarrow and DuckDB with no spade code.

use crate::util::*;
use std::process::Command;

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

/// `hint_lift.py`'s echo columns: the share of each arm's first replies that name a number or a
/// `\boxed{...}` answer of the hint that the first observation does not show.
#[test]
fn hint_lift_counts_first_replies_that_copy_the_hint() {
    let d = tmp();
    let script = r#"
import sys, json, pyarrow as pa, pyarrow.parquet as pq
d = sys.argv[1]
H = {"a": r"Example: codes 31, 40. So \boxed{31}.", "b": "Tally the counts.", "c": r"Monday plus one is \boxed{Tuesday}."}
pq.write_table(pa.Table.from_pylist([{"env_id": k, "source": k + ".py", "skill": "s", "hint": h} for k, h in H.items()]), f"{d}/envs.parquet")
eps = [  # env, arm, first observation, first reply
    ("a", "hint", "codes 9, 12", "31"),            # copies the example
    ("a", "hint", "codes 40, 12", "40"),           # 40 is its own instance's: not a copy
    ("a", "hint", "codes 5, 6", "312 or 3.1"),     # no whole-number match
    ("a", "nohint", "codes 9, 12", "12"),
    ("a", "nohint", "codes 7, 8", "31 maybe"),
    ("b", "hint", "codes 1", "1"),
    ("b", "nohint", "codes 1", "1"),
    ("c", "hint", "Monday?", "I say TUESDAY."),
    ("c", "nohint", "Monday?", "Monday"),
]
rows = []
for i, (e, arm, obs, reply) in enumerate(eps):
    first = obs + ("\n\nHint: " + H[e] if arm == "hint" else "")
    t = {"messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": first}, {"role": "assistant", "content": reply}]}
    rows.append({"env_id": e, "arm": arm, "episode": i, "return": 0.0, "success": False, "status": "ok", "turns": 1, "skill": "s", "transcript": json.dumps(t)})
pq.write_table(pa.Table.from_pylist(rows), f"{d}/rollouts.parquet")
"#;
    let out = Command::new(python()).arg("-c").arg(script).arg(d.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new(python()).arg(root().join("scripts/hint_lift.py")).arg(d.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(d.path().join("lift.csv")).unwrap();
    let rows = csv_maps(&text);
    let echo = |src: &str, arm: &str| rows.iter().find(|r| r["source"] == src).unwrap()[format!("{arm}_echo").as_str()];
    assert_eq!((echo("a.py", "hint"), echo("a.py", "nohint")), ("0.333333", "0.5"));
    assert_eq!((echo("b.py", "hint"), echo("b.py", "nohint")), ("", ""));
    assert_eq!((echo("c.py", "hint"), echo("c.py", "nohint")), ("1", "0"));
    let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(d.path().join("lift.json")).unwrap()).unwrap();
    assert_eq!(s["all"]["echo_envs"], 2);
    assert!((s["all"]["hint_echo"].as_f64().unwrap() - (1.0 / 3.0 + 1.0) / 2.0).abs() < 1e-9, "{s}");
}
