//! Temporary siblings of outputs left behind by a killed writer (a file contract shared by the
//! table writer, spade-io, and the checkpoint writer, spade-train).
//!
//! Every output is written to a hidden sibling named after the output and the writer's process id
//! and renamed into place when complete: `.NAME.PID.XXXXXX.tmp` (tables), `.NAME.tmp.PID` and
//! `.NAME.old.PID` (checkpoint folders). A writer killed with SIGKILL leaves its sibling; the next
//! writer of the same output removes those of processes that are gone ([`remove_dead_temps`]).

use std::path::Path;

/// The writer's process id in a temporary sibling's name, if `entry` is one of `name`'s.
fn temp_pid(entry: &str, name: &str) -> Option<u32> {
    let rest = entry.strip_prefix('.')?.strip_prefix(name)?.strip_prefix('.')?;
    let pid = if let Some(p) = rest.strip_prefix("tmp.").or_else(|| rest.strip_prefix("old.")) {
        p
    } else {
        let (p, tail) = rest.split_once('.')?;
        tail.ends_with(".tmp").then_some(p)?
    };
    pid.parse().ok().filter(|_| pid.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether process `pid` exists (on Linux, from /proc; elsewhere always true: nothing is removed).
fn alive(pid: u32) -> bool {
    !Path::new("/proc/self").exists() || Path::new(&format!("/proc/{pid}")).exists()
}

/// Removes the temporary siblings of output `name` in `dir` whose writer is gone (files or
/// folders); returns how many. What cannot be read or removed is left alone.
pub fn remove_dead_temps(dir: &Path, name: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let mut n = 0;
    for e in entries.flatten() {
        let entry = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = temp_pid(&entry, name) else { continue };
        if pid == std::process::id() || alive(pid) {
            continue;
        }
        let p = e.path();
        let gone = if p.is_dir() { std::fs::remove_dir_all(&p) } else { std::fs::remove_file(&p) };
        n += usize::from(gone.is_ok());
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_temporary_siblings() {
        assert_eq!(temp_pid(".a.parquet.123.xYz9.tmp", "a.parquet"), Some(123));
        assert_eq!(temp_pid(".checkpoint.tmp.77", "checkpoint"), Some(77));
        assert_eq!(temp_pid(".checkpoint.old.78", "checkpoint"), Some(78));
        for other in [".a.parquet.x1.tmp", "a.parquet", ".b.parquet.1.x.tmp", ".checkpoint.tmp.work", ".checkpoint.tmp.7x", ".a.parquet.1.x"] {
            assert_eq!(temp_pid(other, if other.contains("check") { "checkpoint" } else { "a.parquet" }), None, "{other}");
        }
    }

    #[test]
    fn only_the_dead_writers_siblings_are_removed() {
        let d = tempfile::tempdir().unwrap();
        // A process id that is gone: a child that has exited and been reaped.
        let mut dead = std::process::Command::new("true").spawn().unwrap();
        let pid = dead.id();
        dead.wait().unwrap();
        let mine = std::process::id();
        for f in [format!(".t.parquet.{pid}.ab.tmp"), format!(".t.parquet.{mine}.cd.tmp"), "t.parquet".into(), format!(".u.parquet.{pid}.ef.tmp")] {
            std::fs::write(d.path().join(f), b"x").unwrap();
        }
        std::fs::create_dir(d.path().join(format!(".ck.tmp.{pid}"))).unwrap();
        std::fs::write(d.path().join(format!(".ck.tmp.{pid}/model.safetensors")), b"x").unwrap();
        assert_eq!(remove_dead_temps(d.path(), "t.parquet"), 1);
        assert_eq!(remove_dead_temps(d.path(), "ck"), 1);
        let mut left: Vec<String> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        left.sort();
        assert_eq!(left, [format!(".t.parquet.{mine}.cd.tmp"), format!(".u.parquet.{pid}.ef.tmp"), "t.parquet".to_string()]);
    }
}
