//! The house: every crate depends only on crates of a lower floor (crates/README.md's table), so the
//! arrows between crates point down.

use std::collections::BTreeMap;

use crate::util::root;

/// Folder → floor, from crates/README.md's table.
fn floors() -> BTreeMap<String, u32> {
    let text = std::fs::read_to_string(root().join("crates/README.md")).unwrap();
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let name = cells[1].trim_matches('`').trim_end_matches('/').to_string();
        let floor: u32 = cells[2].parse().unwrap_or_else(|_| panic!("crates/README.md: no floor for {name}: {line}"));
        out.insert(name, floor);
    }
    out
}

/// The `spade-*` crates named in a manifest's `[dependencies]` (not dev-dependencies).
fn spade_deps(manifest: &str) -> Vec<String> {
    let mut section = String::new();
    let mut deps = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.to_string();
            continue;
        }
        if section == "[dependencies]" {
            let key = line.split(['=', '.', ' ']).next().unwrap_or("");
            if key.starts_with("spade-") {
                deps.push(key.to_string());
            }
        }
    }
    deps
}

#[test]
fn every_crate_depends_only_on_lower_floors() {
    let floors = floors();
    let mut checked = 0;
    let mut manifests: Vec<(String, u32, String)> = Vec::new();
    for e in std::fs::read_dir(root().join("crates")).unwrap() {
        let dir = e.unwrap().path();
        let manifest = dir.join("Cargo.toml");
        if !manifest.exists() {
            continue;
        }
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let floor = *floors.get(&name).unwrap_or_else(|| panic!("crates/README.md has no row for {name}"));
        manifests.push((name, floor, std::fs::read_to_string(manifest).unwrap()));
    }
    // The root package holds the stages (and the benches).
    manifests.push(("stages".into(), floors["stages"], std::fs::read_to_string(root().join("Cargo.toml")).unwrap()));
    for (name, floor, text) in &manifests {
        for dep in spade_deps(text) {
            let below = *floors.get(&dep).unwrap_or_else(|| panic!("{name} depends on {dep}, which crates/README.md does not list"));
            assert!(below < *floor, "{name} (floor {floor}) depends on {dep} (floor {below}): arrows must point down");
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} dependencies seen: is the manifest parser still right?");
}

#[test]
fn the_manifest_reader_takes_dependencies_not_dev_dependencies() {
    let deps = spade_deps("[package]\nname = \"x\"\n[dependencies]\nspade-io.workspace = true\nspade-model = { path = \"../m\" }\n[dev-dependencies]\nspade-cli.workspace = true\n");
    assert_eq!(deps, ["spade-io", "spade-model"]);
}

/// No build-machine path is compiled into a library or stage: `env!("CARGO_MANIFEST_DIR")` only in
/// tests, benches and test modules (the stages find their data through `spade_model::home`).
#[test]
fn no_build_machine_paths_in_production_code() {
    let mut offenders = Vec::new();
    let mut stack = vec![root().join("crates")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if p.is_dir() {
                if !matches!(name.as_str(), "tests" | "benches" | "target") {
                    stack.push(p);
                }
                continue;
            }
            if !name.ends_with(".rs") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            // Only the code before a file's test module counts.
            let prod = text.split("#[cfg(test)]").next().unwrap();
            if prod.contains("env!(\"CARGO_MANIFEST_DIR\")") {
                offenders.push(p.display().to_string());
            }
        }
    }
    assert!(offenders.is_empty(), "build-machine paths compiled in: {offenders:?}");
}

/// Libraries take and return typed rows (or, the corpus sampler, the columns the stage hands it);
/// reading and writing tables is the stages' business (the root package) and spade-cli's.
#[test]
fn only_the_stages_touch_table_io() {
    let allowed = ["spade-io", "spade-cli"];
    let mut offenders = Vec::new();
    for e in std::fs::read_dir(root().join("crates")).unwrap() {
        let dir = e.unwrap().path();
        let manifest = dir.join("Cargo.toml");
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        if !manifest.exists() || allowed.contains(&name.as_str()) {
            continue;
        }
        if spade_deps(&std::fs::read_to_string(manifest).unwrap()).iter().any(|d| d == "spade-io") {
            offenders.push(name);
        }
    }
    assert!(offenders.is_empty(), "libraries that read or write tables themselves: {offenders:?}");
}

/// No circle among a crate's modules: `crate::m` names in a file's code (before its test module,
/// comments left out) are arrows to module `m`, and following them never comes back (`lib.rs`, which declares and
/// re-exports the modules, is not a node).
#[test]
fn no_crate_has_a_circle_of_modules() {
    use std::collections::{BTreeMap, BTreeSet};
    let mut circles = Vec::new();
    for e in std::fs::read_dir(root().join("crates")).unwrap() {
        let src = e.unwrap().path().join("src");
        if !src.is_dir() {
            continue;
        }
        let mut arrows: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for f in std::fs::read_dir(&src).unwrap() {
            let p = f.unwrap().path();
            let name = p.file_stem().unwrap().to_string_lossy().to_string();
            if p.extension().is_none_or(|x| x != "rs") || name == "lib" || name == "main" {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            // Code only: comments (doc links among them) name modules without importing them.
            let prod: String =
                text.split("#[cfg(test)]").next().unwrap().lines().map(|l| l.split("//").next().unwrap()).collect::<Vec<_>>().join("\n");
            let to: BTreeSet<String> = prod
                .split("crate::")
                .skip(1)
                .map(|rest| rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>())
                .filter(|m| m != &name && src.join(format!("{m}.rs")).exists())
                .collect();
            arrows.insert(name, to);
        }
        // Depth-first search for a back edge.
        fn visit(n: &str, arrows: &BTreeMap<String, BTreeSet<String>>, path: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
            if let Some(i) = path.iter().position(|p| p == n) {
                return Some(path[i..].to_vec());
            }
            if !done.insert(n.to_string()) {
                return None;
            }
            path.push(n.to_string());
            for m in arrows.get(n).into_iter().flatten() {
                if let Some(c) = visit(m, arrows, path, done) {
                    return Some(c);
                }
            }
            path.pop();
            None
        }
        let mut done = BTreeSet::new();
        for n in arrows.keys() {
            if let Some(c) = visit(n, &arrows, &mut Vec::new(), &mut done) {
                circles.push(format!("{}: {}", src.display(), c.join(" → ")));
            }
        }
    }
    assert!(circles.is_empty(), "circles of modules: {circles:?}");
}
