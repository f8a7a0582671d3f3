//! The engine's layers: every module of `runner/src` (the binary's `cli/`
//! and `main.rs` aside) may import only modules on its own layer or below,
//! and no two modules import each other, even through others: neither two
//! top modules (`host`, `probe`) nor two files or folders of one module
//! (`advise/headroom.rs` and `advise/input.rs`). The layers, lowest first,
//! are declared here; a unit is a top module.
//!
//! No engine file prints or takes the process's stdout or stderr: it
//! writes to the `Console` the binary hands it.
//!
//! Imports are read from the whole source (`crate::` and `super::` paths,
//! grouped ones like `use crate::{a::x, b::y}` expanded); only test modules
//! are left out: a `#[cfg(test)] mod NAME { ... }` block, or the file a
//! `#[cfg(test)] mod NAME;` names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Lowest first. A module matches its longest listed prefix.
const LAYERS: &[&[&str]] = &[
    // Leaves: hashing the fixture's work, request fields, statistics, words.
    &["console", "digest", "input", "stats", "text"],
    // The machine: processes, signals, the lock, the venv, limits.
    &["host"],
    // One measuring session: the project, the lock, Python, signals.
    &["session"],
    // The kernel's accounting: schedstat, the witness, noise.
    &["kernel"],
    // What rows and profiles say (the row loader is higher: `spec::row`).
    &["spec"],
    &["verdict"],
    &["exit"],
    &["http"],
    &["server"],
    &["probe", "load"],
    // Reading a row needs the probe registry.
    &["spec::row"],
    // The venv ready for a set of rows (their `requires:`).
    &["setup"],
    &["sweep"],
    &["advise"],
    &["gate"],
    &["stress"],
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

/// `source` with its test modules' blocks blanked (`#[cfg(test)]` then
/// `mod NAME {`, to the matching brace); every other line kept, a
/// `#[cfg(test)]` on anything else included.
fn without_test_blocks(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(at) = rest.find("#[cfg(test)]") {
        let after = &rest[at + "#[cfg(test)]".len()..];
        let item = after.trim_start();
        let is_block = item.starts_with("mod ")
            && item
                .find(['{', ';'])
                .is_some_and(|i| item.as_bytes()[i] == b'{');
        if !is_block {
            out.push_str(&rest[..at + "#[cfg(test)]".len()]);
            rest = after;
            continue;
        }
        out.push_str(&rest[..at]);
        let open = at + "#[cfg(test)]".len() + (after.len() - item.len()) + item.find('{').unwrap();
        let mut depth = 0usize;
        let mut end = rest.len();
        for (i, c) in rest[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The names of the test modules `source` declares as files
/// (`#[cfg(test)] mod tests;`).
fn test_module_files(source: &str) -> Vec<String> {
    source
        .match_indices("#[cfg(test)]")
        .filter_map(|(at, attr)| {
            let item = source[at + attr.len()..].trim_start();
            let name = item.strip_prefix("mod ")?;
            let end = name.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
            name[end..]
                .trim_start()
                .starts_with(';')
                .then(|| name[..end].to_string())
        })
        .collect()
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths of the use tree at the start of `text` (`a::b`, `a::{b, c::d}`,
/// `a::{self, b}`), each appended to `base`.
fn use_tree(text: &str, base: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let mut path = base.to_vec();
    let bytes = text.as_bytes();
    // `crate::{a, b}`: the group straight after the prefix.
    let mut i = if text.starts_with('{') { 0 } else { usize::MAX };
    loop {
        if i == 0 {
            i = 1;
            loop {
                while i < text.len() && (bytes[i] as char).is_whitespace() {
                    i += 1;
                }
                if i >= text.len() || bytes[i] == b'}' {
                    return i + 1;
                }
                i += use_tree(&text[i..], &path, out);
                while i < text.len() && ((bytes[i] as char).is_whitespace() || bytes[i] == b',') {
                    i += 1;
                }
            }
        }
        if i == usize::MAX {
            i = 0;
        }
        let start = i;
        while i < text.len() && is_ident(text[i..].chars().next().unwrap()) {
            i += text[i..].chars().next().unwrap().len_utf8();
        }
        if i > start && &text[start..i] != "self" {
            path.push(text[start..i].to_string());
        }
        if text[i..].starts_with("::{") {
            i += 2;
            // Read as a group right after a prefix (above).
            return i + use_tree(&text[i..], &path, out);
        }
        if text[i..].starts_with("::") {
            i += 2;
            continue;
        }
        // ` as name` does not change the path; it is read past.
        out.push(path);
        let trimmed = text[i..].trim_start();
        if let Some(alias) = trimmed.strip_prefix("as ") {
            let alias = alias.trim_start();
            let len = alias.find(|c: char| !is_ident(c)).unwrap_or(alias.len());
            return text.len() - alias.len() + len;
        }
        return i;
    }
}

/// The module paths a source file names: `crate::a::b`, `super::x` and
/// their groups (resolved from `me`, the file's module path).
fn imports(me: &[String], source: &str) -> Vec<Vec<String>> {
    // Comments (doc links among them) name modules without importing them.
    let code: String = without_test_blocks(source)
        .lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    for (start, _) in code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
    {
        let before = code[..start].chars().next_back();
        if before.is_some_and(|c| is_ident(c) || c == ':') {
            continue;
        }
        let rest = &code[start..];
        let (base, skip): (Vec<String>, usize) = if rest.starts_with("crate::") {
            (Vec::new(), "crate::".len())
        } else {
            // `me` is the file's module (a mod.rs is its folder's), so
            // each `super` is one step up.
            let mut base = me.to_vec();
            let mut skip = 0;
            while rest[skip..].starts_with("super::") {
                base.pop();
                skip += "super::".len();
            }
            (base, skip)
        };
        use_tree(&rest[skip..], &base, &mut out);
    }
    out
}

/// The lines of `code` that print or take the process's own streams (the
/// engine writes only to the `Console` the binary hands it); comments
/// aside.
fn prints(code: &str) -> impl Iterator<Item = &str> {
    const PRINTING: [&str; 7] = [
        "print!(",
        "println!(",
        "eprint!(",
        "eprintln!(",
        "dbg!(",
        "stdout()",
        "stderr()",
    ];
    code.lines().filter(|line| {
        let code = line.find("//").map_or(*line, |i| &line[..i]);
        PRINTING.iter().any(|p| {
            code.match_indices(p)
                .any(|(at, _)| !code[..at].ends_with(|c: char| is_ident(c)))
        })
    })
}

/// Every cycle in `edges`, once per edge on it, as a message.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>, what: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for (from, tos) in edges {
        for to in tos {
            let mut seen = BTreeSet::new();
            let mut stack = vec![to.clone()];
            while let Some(u) = stack.pop() {
                if u == *from {
                    problems.push(format!(
                        "import circle{what}: {from} -> {to} -> ... -> {from}"
                    ));
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

/// Every upward import and every cycle, between top modules and between
/// the files and folders of one module, as messages.
fn check(files: &[(PathBuf, String)]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    // Within each module: sibling -> sibling (the module's own mod.rs, the
    // parent, is neither).
    let mut inner: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let tests: BTreeSet<PathBuf> = files
        .iter()
        .flat_map(|(rel, source)| {
            let dir = if rel.file_name().is_some_and(|n| n == "mod.rs") {
                rel.parent().unwrap_or(Path::new("")).to_path_buf()
            } else {
                rel.with_extension("")
            };
            test_module_files(source)
                .into_iter()
                .flat_map(move |m| [dir.join(format!("{m}.rs")), dir.join(&m).join("mod.rs")])
        })
        .collect();
    for (rel, source) in files {
        if tests.contains(rel) {
            continue;
        }
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
        problems.extend(prints(&without_test_blocks(source)).map(|line| {
            format!(
                "{}: prints (write to the Console it is given): {line}",
                rel.display()
            )
        }));
        for path in imports(&me, source) {
            if path.first().map(String::as_str) == Some("cli") {
                problems.push(format!(
                    "{}: imports the CLI ({})",
                    rel.display(),
                    path.join("::")
                ));
                continue;
            }
            // The deepest module both paths are in, and the child of it
            // each side is in.
            let common = me.iter().zip(&path).take_while(|(a, b)| a == b).count();
            if common < me.len() && common < path.len() {
                inner
                    .entry(me[..common].to_vec())
                    .or_default()
                    .entry(me[common].clone())
                    .or_default()
                    .insert(path[common].clone());
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
    problems.extend(circles(&edges, ""));
    for (module, edges) in &inner {
        if module.is_empty() {
            continue; // Top modules: the layered check above.
        }
        problems.extend(circles(edges, &format!(" in {}", module.join("::"))));
    }
    problems
}

/// Every engine file, relative to runner/src.
fn engine_files() -> Vec<(PathBuf, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path.strip_prefix(&src).unwrap().to_path_buf();
            if rel.starts_with("cli") || rel == Path::new("main.rs") || rel == Path::new("lib.rs") {
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

fn file(p: &str, s: &str) -> (PathBuf, String) {
    (PathBuf::from(p), s.to_string())
}

#[test]
fn an_upward_import_a_circle_and_clap_are_caught() {
    // The twin of the test above: the same check fails on a made-up tree.
    let upward = [file("host/x.rs", "use crate::gate::batch::Job;\n")];
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
}

#[test]
fn an_engine_file_that_prints_is_caught() {
    for code in [
        "fn f() { println!(\"x\"); }\n",
        "fn f() { eprint!(\"x\"); }\n",
        "fn f() { let _ = std::io::stdout().lock(); }\n",
        "fn f() -> Box<dyn Write> { Box::new(io::stderr()) }\n",
    ] {
        let printing = [file("sweep/x.rs", code)];
        assert!(
            check(&printing).iter().any(|p| p.contains("prints")),
            "{code}: {:?}",
            check(&printing)
        );
    }
    // Its twin: writing to a console, a comment, a test module, and a
    // name that merely ends so, pass.
    let quiet = [file(
        "sweep/x.rs",
        "// println!(\"x\")\nfn f(c: &dyn Console) { c.note(\"x\"); writeln!(w, \"x\"); }\n\
         fn g() { my_stdout(); }\n#[cfg(test)]\nmod tests { fn t() { println!(\"x\"); } }\n",
    )];
    assert!(check(&quiet).is_empty(), "{:?}", check(&quiet));
}

#[test]
fn a_grouped_import_is_read_whole() {
    // Each path of a group, however nested, is an import.
    let grouped = [file(
        "host/x.rs",
        "use crate::{digest::WorkDigest, stats::{self, Spread}, gate::{batch::Job}};\n",
    )];
    let problems = check(&grouped);
    assert!(
        problems.iter().any(|p| p.contains("gate::batch::Job")),
        "{problems:?}"
    );
    // Its twin: the same group without the upward path passes.
    let fine = [file(
        "host/x.rs",
        "use crate::{digest::WorkDigest, stats::{self, Spread}};\n",
    )];
    assert!(check(&fine).is_empty(), "{:?}", check(&fine));
    // And the group's paths are the ones written.
    let me = vec!["host".to_string(), "x".to_string()];
    let paths: Vec<String> = imports(&me, "use super::{a::{b, c as d}, self};")
        .iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(paths, ["host::a::b", "host::a::c", "host"]);
}

#[test]
fn a_test_attribute_on_anything_but_a_test_module_does_not_end_the_file() {
    // An upward import after a `#[cfg(test)]` helper is still read.
    let after_attribute = [file(
        "host/x.rs",
        "#[cfg(test)]\nfn helper() {}\n\nuse crate::gate::X;\n",
    )];
    assert!(
        check(&after_attribute)
            .iter()
            .any(|p| p.contains("higher layer")),
        "{:?}",
        check(&after_attribute)
    );
    // Its twin: the same import inside a test module is left out, and so is
    // a test module's own file; code after the block is read again.
    let test_block = [file(
        "host/x.rs",
        "#[cfg(test)]\nmod tests { fn f() { if true { crate::gate::X; } } }\n",
    )];
    assert!(check(&test_block).is_empty(), "{:?}", check(&test_block));
    let test_file = [
        file("host/x.rs", "#[cfg(test)]\nmod tests;\n"),
        file("host/x/tests.rs", "use crate::gate::X;\n"),
    ];
    assert!(check(&test_file).is_empty(), "{:?}", check(&test_file));
    let after_block = [file(
        "host/x.rs",
        "#[cfg(test)]\nmod tests { }\nuse crate::gate::X;\n",
    )];
    assert!(!check(&after_block).is_empty());
}

#[test]
fn a_circle_between_two_files_of_one_module_is_caught() {
    let circle = [
        file("advise/a.rs", "use super::b::X;\n"),
        file("advise/b.rs", "use crate::advise::a::Y;\n"),
    ];
    let problems = check(&circle);
    assert!(
        problems.iter().any(|p| p.contains("circle in advise")),
        "{problems:?}"
    );
    // Deeper: a folder and a file of `probe`, through a grouped import.
    let deep = [
        file("probe/k/judge/rules.rs", "use crate::probe::{seeds::S};\n"),
        file("probe/seeds.rs", "use super::k::judge::rules::R;\n"),
    ];
    assert!(
        check(&deep).iter().any(|p| p.contains("circle in probe")),
        "{:?}",
        check(&deep)
    );
    // Its twin: one way only, and a module's own mod.rs (the parent), is
    // no circle.
    let one_way = [
        file("advise/a.rs", "use super::b::X;\n"),
        file("advise/b.rs", "use super::Y;\n"),
        file("advise/mod.rs", "pub use a::Z;\nuse self::b::W;\n"),
    ];
    assert!(check(&one_way).is_empty(), "{:?}", check(&one_way));
}
