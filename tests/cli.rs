//! The command-line contract shared by every stage: help, exit codes, config files.

use crate::util::*;

#[test]
fn every_stage_has_help_with_examples_and_common_flags() {
    for s in STAGES {
        let out = stage(s).arg("--help").output().unwrap();
        assert!(out.status.success(), "{s} --help failed");
        let text = String::from_utf8(out.stdout).unwrap();
        for needle in ["Examples:", "--seed", "--round", "--config", "--metrics", "--progress", "--quiet", "--verbose"] {
            assert!(text.contains(needle), "{s} --help lacks {needle}");
        }
        insta::assert_snapshot!(format!("help-{s}"), text);
    }
}

#[test]
fn every_stage_writes_its_man_page_and_completions() {
    for s in STAGES {
        let man = stage(s).args(["--generate", "man"]).output().unwrap();
        assert!(man.status.success(), "{s} --generate man");
        let man = String::from_utf8(man.stdout).unwrap();
        assert!(man.contains(".TH") && man.contains(s) && man.contains("\\-\\-seed"), "{s}: a roff page with its flags");
        let kinds = [
            ("complete-bash", format!("_{}()", s.replace('-', "__")), "--round"),
            ("complete-zsh", format!("#compdef {s}"), "--round"),
            ("complete-fish", format!("complete -c {s}"), "-l round"),
        ];
        for (kind, needle, flag) in kinds {
            let out = stage(s).args(["--generate", kind]).output().unwrap();
            let text = String::from_utf8(out.stdout).unwrap();
            assert!(out.status.success() && text.contains(&needle) && text.contains(flag), "{s} {kind}: {needle} and {flag} in\n{text}");
        }
        stage(s).arg("--generate=complete-elvish").assert().success();
        stage(s).args(["--generate", "complete-tcsh"]).assert().code(2).stderr(predicates::str::contains("complete-bash"));
        stage(s).args(["--seed", "1", "--generate", "man"]).assert().code(2);
        if *s == "spade-sample-corpus" {
            let d = tmp();
            let out = d.path().join("x.jsonl");
            stage(s)
                .arg(root().join("data/corpus"))
                .arg("-o")
                .arg(&out)
                .args(["--generate", "man"])
                .assert()
                .code(2)
                .stderr(predicates::str::contains("must be the first argument"));
            assert!(!out.exists());
        }
        // A closed stdout is not an error.
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin(s))
            .args(["--generate", "complete-bash"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        assert_eq!(child.wait().unwrap().code(), Some(0), "{s} --generate into a closed pipe");
    }
}

#[test]
fn every_stage_reports_its_version() {
    for s in STAGES {
        stage(s).arg("--version").assert().success().stdout(predicates::str::contains(env!("CARGO_PKG_VERSION")));
    }
}

#[test]
fn unknown_flag_exits_2() {
    for s in STAGES {
        stage(s).arg("--no-such-flag").assert().code(2);
    }
}

#[test]
fn config_file_supplies_defaults_and_flags_win() {
    let d = tmp();
    let corpus = d.path().join("c.jsonl");
    write_jsonl(&corpus, &corpus_rows(&[("math", 10)], 20));
    let cfg = d.path().join("run.toml");
    std::fs::write(&cfg, "n = 3\nmax_words = 5\nseed = 9\n").unwrap();
    let out = d.path().join("docs.jsonl");
    stage("spade-sample-corpus").arg(&corpus).arg("-o").arg(&out).arg("--config").arg(&cfg).arg("--n").arg("4").assert().success();
    let rows = read_jsonl(&out);
    assert_eq!(rows.len(), 4, "--n on the command line wins over the file");
    assert!(rows.iter().all(|r| r["words"] == 5), "max_words comes from the file");

    std::fs::write(&cfg, "nope = 1\n").unwrap();
    stage("spade-sample-corpus")
        .arg(&corpus)
        .arg("-o")
        .arg(&out)
        .arg("--config")
        .arg(&cfg)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("unknown key `nope`"));
}

/// Stages whose logic has not landed yet; each must say so and exit 2, never fake output.
/// A stage leaves this list when it is built.
const NOT_YET: &[(&str, &[&str])] = &[];

#[test]
fn unimplemented_stages_say_so_and_exit_2() {
    let d = tmp();
    let out = d.path().join("x.parquet");
    for (s, args) in NOT_YET {
        stage(s).args(*args).arg(&out).assert().code(2).stderr(predicates::str::contains("not implemented yet"));
        assert!(!out.exists(), "{s} wrote output");
    }
}

#[test]
fn metrics_lines_are_appended() {
    let d = tmp();
    let corpus = d.path().join("c.jsonl");
    write_jsonl(&corpus, &corpus_rows(&[("math", 5)], 10));
    let metrics = d.path().join("m/metrics.jsonl");
    for _ in 0..2 {
        stage("spade-sample-corpus").arg(&corpus).args(["-o", "-", "--n", "2", "--round", "3", "--metrics"]).arg(&metrics).assert().success();
    }
    let lines = read_jsonl(&metrics);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["stage"], "spade-sample-corpus");
    assert_eq!(lines[0]["round"], 3);
    assert_eq!(lines[0]["docs"], 2);
}

#[test]
fn broken_pipe_exits_0() {
    let d = tmp();
    let corpus = d.path().join("c.jsonl");
    write_jsonl(&corpus, &corpus_rows(&[("math", 3000)], 50));
    let bin = assert_cmd::cargo::cargo_bin("spade-sample-corpus");
    let sh = format!("'{}' '{}' -o - --n 3000 | head -c 10 >/dev/null; echo ${{PIPESTATUS[0]}}", bin.display(), corpus.display());
    let out = std::process::Command::new("bash").arg("-c").arg(sh).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "0", "stderr: {}", String::from_utf8_lossy(&out.stderr));
}

/// A kernel level that is unknown or beyond the CPU (`SPADE_ISA`) stops a generating stage with
/// one line naming the variable and the value, exit 2, and no output.
#[test]
fn a_wrong_kernel_level_is_a_one_line_error() {
    let d = tmp();
    let model = tiny_model(&d.path().join("tiny"), 3, 256);
    for value in ["bogus", if cfg!(target_arch = "x86_64") { "neon" } else { "avx2" }] {
        let out = d.path().join(format!("eval-{value}.parquet"));
        let o = stage("spade-eval")
            .env("SPADE_ISA", value)
            .args(["--model", model.to_str().unwrap(), "--suite", "rg:math", "--n", "1", "-o", out.to_str().unwrap(), "--progress", "off"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{value}: {err}");
        let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
        assert_eq!(errors.len(), 1, "{value}: {err}");
        assert!(errors[0].contains(&format!("SPADE_ISA={value}")), "{value}: {err}");
        assert!(!out.exists(), "{value}: an output was written");
    }
}
