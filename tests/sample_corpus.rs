//! `spade-sample-corpus`: sampling determinism, exact per-domain counts, shards, errors, empty input.

use crate::util::*;

fn ids(path: &std::path::Path) -> Vec<String> {
    read_jsonl(path).iter().map(|r| r["doc_id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn same_seed_same_sample_other_seed_other_sample() {
    let d = tmp();
    let corpus = d.path().join("c.jsonl");
    write_jsonl(&corpus, &corpus_rows(&[("math", 50), ("code", 50)], 30));
    let run = |seed: &str, out: &str| {
        let out = d.path().join(out);
        stage("spade-sample-corpus").arg(&corpus).args(["--n", "10", "--seed", seed, "-o"]).arg(&out).assert().success();
        std::fs::read(&out).unwrap()
    };
    let a = run("1", "a.jsonl");
    let b = run("1", "b.jsonl");
    let c = run("2", "c.jsonl");
    assert_eq!(a, b, "same seed, same bytes");
    assert_ne!(a, c, "another seed draws another sample");
    assert_eq!(ids(&d.path().join("a.jsonl")).len(), 10);
}

#[test]
fn parquet_output_is_deterministic_too() {
    let d = tmp();
    let corpus = d.path().join("c.jsonl");
    write_jsonl(&corpus, &corpus_rows(&[("math", 30)], 10));
    // The output path is part of the recorded configuration, so compare two runs to one path.
    let out = d.path().join("docs.parquet");
    let mut runs = Vec::new();
    for _ in 0..2 {
        stage("spade-sample-corpus").arg(&corpus).args(["--n", "5", "-o"]).arg(&out).assert().success();
        runs.push(std::fs::read(&out).unwrap());
    }
    assert_eq!(runs[0], runs[1]);
}

#[test]
fn mix_gives_exact_per_domain_counts() {
    let d = tmp();
    let corpus = d.path().join("c.jsonl");
    write_jsonl(&corpus, &corpus_rows(&[("math", 40), ("science", 40), ("code", 40), ("poetry", 40)], 10));
    let out = d.path().join("docs.jsonl");
    stage("spade-sample-corpus").arg(&corpus).args(["--mix", "math=10,science=5,code=15", "-o"]).arg(&out).assert().success();
    let rows = read_jsonl(&out);
    let count = |dom: &str| rows.iter().filter(|r| r["domain"] == dom).count();
    assert_eq!((count("math"), count("science"), count("code"), count("poetry")), (10, 5, 15, 0));
    for r in &rows {
        assert!(r["doc_id"].as_str().unwrap().starts_with(r["domain"].as_str().unwrap()));
    }
}

#[test]
fn short_domain_is_an_error_unless_allowed() {
    let d = tmp();
    let corpus = d.path().join("c.jsonl");
    write_jsonl(&corpus, &corpus_rows(&[("math", 10), ("science", 3)], 10));
    let out = d.path().join("docs.jsonl");
    stage("spade-sample-corpus")
        .arg(&corpus)
        .args(["--mix", "math=2,science=5", "-o"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("domain `science` has 3 documents, the mix asks for 5"));
    assert!(!out.exists());
    stage("spade-sample-corpus").arg(&corpus).args(["--mix", "math=2,science=5", "--allow-short", "-o"]).arg(&out).assert().success();
    assert_eq!(read_jsonl(&out).len(), 5);
}

#[test]
fn shard_split_and_order_do_not_change_the_sample() {
    let d = tmp();
    let rows = corpus_rows(&[("math", 60)], 10);
    let whole = d.path().join("whole.jsonl");
    write_jsonl(&whole, &rows);
    let shards = d.path().join("shards");
    std::fs::create_dir(&shards).unwrap();
    write_jsonl(&shards.join("part-2.jsonl"), &rows[..25]);
    write_jsonl(&shards.join("part-1.jsonl"), &rows[25..]);
    let a = d.path().join("a.jsonl");
    let b = d.path().join("b.jsonl");
    stage("spade-sample-corpus").arg(&whole).args(["--n", "7", "-o"]).arg(&a).assert().success();
    stage("spade-sample-corpus").arg(format!("{}/part-*.jsonl", shards.display())).args(["--n", "7", "-o"]).arg(&b).assert().success();
    assert_eq!(ids(&a), ids(&b));
}

#[test]
fn truncation_and_column_mapping_and_carry_through() {
    let d = tmp();
    let corpus = d.path().join("c.jsonl");
    write_jsonl(&corpus, &[serde_json::json!({"url": 17, "body": "one two three four five", "lang": "en"})]);
    let out = d.path().join("docs.jsonl");
    stage("spade-sample-corpus")
        .arg(&corpus)
        .args(["--n", "1", "--max-words", "3", "--id-col", "url", "--text-col", "body", "-o"])
        .arg(&out)
        .assert()
        .success();
    let r = &read_jsonl(&out)[0];
    assert_eq!(r["doc_id"], "17");
    assert_eq!(r["text"], "one two three");
    assert_eq!(r["words"], 3);
    assert_eq!(r["truncated"], true);
    assert_eq!(r["lang"], "en", "other corpus columns are carried through");
    assert_eq!(r["source"], "c.jsonl", "the shard name stands in for a missing source");
    assert!(r["domain"].is_null());
}

#[test]
fn stdin_and_stdout() {
    let rows = corpus_rows(&[("math", 5)], 4);
    let input: String = rows.iter().map(|r| format!("{r}\n")).collect();
    let out = stage("spade-sample-corpus").args(["-", "-o", "-", "--n", "5"]).write_stdin(input).output().unwrap();
    assert!(out.status.success());
    let lines: Vec<_> = String::from_utf8(out.stdout).unwrap().lines().map(String::from).collect();
    assert_eq!(lines.len(), 5);
    assert!(out.stderr.is_empty() || !String::from_utf8_lossy(&out.stderr).contains("{\"doc_id\""), "no data on stderr");
}

#[test]
fn empty_corpus_gives_empty_table_with_schema() {
    let d = tmp();
    let corpus = d.path().join("empty.jsonl");
    std::fs::write(&corpus, "").unwrap();
    let out = d.path().join("docs.parquet");
    stage("spade-sample-corpus").arg(&corpus).args(["--n", "0", "-o"]).arg(&out).assert().success();
    let r = spade_io::TableReader::open(&[out.to_str().unwrap()]).unwrap();
    assert_eq!(r.num_rows(), 0);
    assert!(r.schema().field_with_name("doc_id").is_ok());
    assert!(r.schema().field_with_name("text").is_ok());
}

#[test]
fn bad_inputs_exit_2_with_one_line_naming_the_problem() {
    let d = tmp();
    let out = d.path().join("docs.parquet");
    let bad = d.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"id\": \"1\", \"text\": \"a\"}\nnot json\n").unwrap();
    let notext = d.path().join("notext.jsonl");
    write_jsonl(&notext, &[serde_json::json!({"id": "1", "body": "x"})]);
    let nullid = d.path().join("nullid.jsonl");
    write_jsonl(&nullid, &[serde_json::json!({"id": "1", "text": "x"}), serde_json::json!({"id": null, "text": "y"})]);
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![d.path().join("nope.jsonl").display().to_string()], "nope.jsonl: no such file"),
        (vec![bad.display().to_string()], "bad.jsonl: line 2: invalid JSON"),
        (vec![notext.display().to_string()], "notext.jsonl: column `text`: missing"),
        (vec![nullid.display().to_string()], "nullid.jsonl: row 2: column `id`: is null"),
        (vec![format!("{}/*.parquet", d.path().display())], "no table file matches"),
    ];
    for (args, msg) in cases {
        let o = stage("spade-sample-corpus").args(&args).args(["--n", "1", "-o"]).arg(&out).output().unwrap();
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(msg), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(!out.exists());
    }
}

#[test]
fn default_corpus_has_the_three_domains() {
    let out = tmp();
    let docs = out.path().join("docs.jsonl");
    stage("spade-sample-corpus").arg(root().join("data/corpus")).args(["--mix", "math=50,science=50,code=50", "-o"]).arg(&docs).assert().success();
    let rows = read_jsonl(&docs);
    assert_eq!(rows.len(), 150);
    for r in &rows {
        let w = r["words"].as_i64().unwrap();
        assert!((150..=400).contains(&w), "{} has {w} words", r["doc_id"]);
    }
}

#[test]
fn rounds_of_a_run_draw_fresh_documents_until_the_corpus_is_used_up() {
    let d = tmp();
    let a = d.path().join("a.jsonl");
    let b = d.path().join("b.jsonl");
    write_jsonl(&a, &corpus_rows(&[("math", 6)], 10));
    write_jsonl(&b, &corpus_rows(&[("code", 5)], 10));
    let draw = |round: u64, shards: [&std::path::Path; 2]| -> Vec<String> {
        let out = d.path().join(format!("r{round}.jsonl"));
        stage("spade-sample-corpus").args(shards).args(["--n", "3", "--seed", "4", "--round", &round.to_string(), "-o"]).arg(&out).assert().success();
        ids(&out)
    };
    let r1 = draw(1, [&a, &b]);
    assert_eq!(r1, draw(0, [&a, &b]), "round 0 (outside a run) draws as round 1");
    assert_eq!(draw(2, [&a, &b]), draw(2, [&b, &a]), "shard order does not matter");
    let mut seen = std::collections::HashSet::new();
    for r in 1..=3 {
        for id in draw(r, [&a, &b]) {
            assert!(seen.insert(id.clone()), "round {r} drew {id} again before the corpus was used up");
        }
    }
    // 11 documents: round 4 takes the last two of the first pass and one of the second.
    let r4 = draw(4, [&a, &b]);
    assert_eq!(r4.len(), 3);
    assert_eq!(r4.iter().filter(|id| !seen.contains(*id)).count(), 2);
    assert_eq!(r4.iter().collect::<std::collections::HashSet<_>>().len(), 3, "no document twice in a round");
}
