//! The engine's layers: every module of `runner/src` (the binary's `cli/`
//! and `main.rs` aside) may import only modules on its own layer or below,
//! and no two modules import each other, even through others. The layers,
//! lowest first, are declared here; a unit is a top module (`host`) or,
//! where a folder holds pieces on two layers, a file of it
//! (`gate::result`: what a gate produced, below the events that carry it).
//! Imports are read from the source (`crate::` and `super::` paths), test
//! modules (`#[cfg(test)]`, at the end of a file) left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Lowest first. A module matches its longest listed prefix.
const LAYERS: &[&[&str]] = &[
    // Leaves: hashing the fixture's work, request fields, statistics, words.
    &["digest", "request", "stats", "text"],
    // The machine: processes, signals, the lock, the venv, limits.
    &["host"],
    // The kernel's accounting: schedstat, the witness, noise.
    &["kernel"],
    // What rows and profiles say (the row loader is higher: `spec::row`).
    &["spec"],
    &["verdict"],
    &["exit"],
    &["http"],
    // The pieces every probe and server shares: seeds, trial events.
    &["probe::seeds", "probe::trial"],
    &["server"],
    &["probe", "load"],
    // Reading a row needs the probe registry.
    &["spec::row"],
    &["sweep"],
    &["advise"],
    &["gate::result"],
    &["event"],
    &["gate"],
    &["report"],
];

/// `runner/src/a/b.rs` (or `a/b/mod.rs`) as `["a", "b"]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().map(String::as_str) == Some("mod") {
        parts.pop();
    }
    parts
}

/// The unit a module path belongs to, and its layer.
fn unit(path: &[String]) -> Option<(String, usize)> {
    let mut best: Option<(String, usize)> = None;
    for (layer, units) in LAYERS.iter().enumerate() {
        for u in *units {
            let parts: Vec<&str> = u.split("::").collect();
            let matches = parts.len() <= path.len() && parts.iter().zip(path).all(|(a, b)| a == b);
            if matches
                && best
                    .as_ref()
                    .is_none_or(|(b, _)| b.split("::").count() < parts.len())
            {
                best = Some((u.to_string(), layer));
            }
        }
    }
    best
}

/// The module paths a source file names: `crate::a::b` and `super::x`
/// (resolved from `me`, the file's module path).
fn imports(me: &[String], source: &str) -> Vec<Vec<String>> {
    let code = source.split("#[cfg(test)]").next().unwrap_or(source);
    let mut out = Vec::new();
    for (start, _) in code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
    {
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = &code[start..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        let mut segs: Vec<&str> = rest[..end].split("::").filter(|s| !s.is_empty()).collect();
        let mut base: Vec<String> = if segs[0] == "crate" {
            segs.remove(0);
            Vec::new()
        } else {
            // `me` is the file's module (a mod.rs is its folder's), so
            // each `super` is one step up.
            let mut base = me.to_vec();
            while segs.first() == Some(&"super") {
                segs.remove(0);
                base.pop();
            }
            base
        };
        base.extend(segs.iter().map(|s| s.to_string()));
        out.push(base);
    }
    out
}

/// Every upward import and every cycle between units, as messages.
fn check(files: &[(std::path::PathBuf, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, source) in files {
        let me = module_path(rel);
        let Some((my_unit, my_layer)) = unit(&me) else {
            problems.push(format!("{}: in no layer; add it to LAYERS", rel.display()));
            continue;
        };
        for line in source.lines() {
            if line.contains("clap") && !line.trim_start().starts_with("//") {
                problems.push(format!("{}: mentions clap: {line}", rel.display()));
            }
        }
        for path in imports(&me, source) {
            if matches!(path.first().map(String::as_str), Some("cli" | "options")) {
                problems.push(format!(
                    "{}: imports the CLI ({})",
                    rel.display(),
                    path.join("::")
                ));
                continue;
            }
            let Some((to_unit, to_layer)) = unit(&path) else {
                continue;
            };
            if to_layer > my_layer {
                problems.push(format!(
                    "{}: {my_unit} imports {} on a higher layer ({to_unit})",
                    rel.display(),
                    path.join("::")
                ));
            }
            if to_unit != my_unit {
                edges.entry(my_unit.clone()).or_default().insert(to_unit);
            }
        }
    }
    // A cycle: a unit reachable from one it imports.
    for (from, tos) in &edges {
        for to in tos {
            let mut seen = BTreeSet::new();
            let mut stack = vec![to.clone()];
            while let Some(u) = stack.pop() {
                if u == *from {
                    problems.push(format!("import circle: {from} -> {to} -> ... -> {from}"));
                    break;
                }
                if seen.insert(u.clone()) {
                    stack.extend(edges.get(&u).into_iter().flatten().cloned());
                }
            }
        }
    }
    problems
}

/// Every engine file, relative to runner/src.
fn engine_files() -> Vec<(std::path::PathBuf, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(&src).unwrap().to_path_buf();
            // A `tests.rs` is a test module (`#[cfg(test)] mod tests;`).
            if rel.starts_with("cli")
                || rel == Path::new("main.rs")
                || rel == Path::new("lib.rs")
                || rel.file_name().is_some_and(|n| n == "tests.rs")
            {
                continue;
            }
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn no_engine_module_imports_upward_or_in_a_circle() {
    let files = engine_files();
    assert!(files.len() > 50, "found only {} files", files.len());
    let problems = check(&files);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn an_upward_import_a_circle_and_clap_are_caught() {
    let file = |p: &str, s: &str| (std::path::PathBuf::from(p), s.to_string());
    // The twin of the test above: the same check fails on a made-up tree.
    let upward = [file("host/x.rs", "use crate::gate::session::Job;\n")];
    assert!(
        check(&upward)[0].contains("higher layer"),
        "{:?}",
        check(&upward)
    );
    let through_super = [file("host/x.rs", "use super::super::report::json;\n")];
    assert!(!check(&through_super).is_empty());
    let circle = [
        file("digest.rs", "use crate::text::x;\n"),
        file("text.rs", "fn f() { crate::digest::y(); }\n"),
    ];
    assert!(
        check(&circle).iter().any(|p| p.contains("circle")),
        "{:?}",
        check(&circle)
    );
    let cli = [file("sweep/row.rs", "use crate::cli::SweepArgs;\n")];
    assert!(check(&cli)[0].contains("the CLI"));
    let clap = [file("kernel/noise.rs", "#[derive(clap::ValueEnum)]\n")];
    assert!(check(&clap)[0].contains("clap"));
    // Test modules may reach anywhere.
    let test_only = [file(
        "host/x.rs",
        "#[cfg(test)]\nmod t { use crate::gate::X; }\n",
    )];
    assert!(check(&test_only).is_empty());
}
