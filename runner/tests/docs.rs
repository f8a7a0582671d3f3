//! The repository's own docs: no file sends a reader to a document outside
//! the repository (the background note the project grew from), every
//! `docs/NAME.md` named in code, help text, rows and READMEs is a file, and
//! every relative link of the Markdown files resolves. Each
//! check first runs on synthetic text it must catch, so a scan that finds
//! nothing because it cannot find anything does not pass.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("runner/ sits in the repository")
        .to_path_buf()
}

/// What the product must hold, as (root-relative) files and folders.
const SCANNED: &[&str] = &[
    "runner",
    "README.md",
    "specs",
    "fixtures",
    "docs",
    "gates",
    "bench",
    ".github",
];

/// Folders that hold build output or caches, not the product's text.
const SKIPPED: &[&str] = &["target", ".gates", "__pycache__", ".git"];

/// Phrases that cite the outside note. Built from pieces so that this file
/// does not cite it itself; `seed` alone also means a request's or a fuzz
/// run's seed, which is fine.
fn citation_phrases() -> [String; 3] {
    [
        format!("{} note", "seed"),
        format!("the {}'s", "seed"),
        format!("{} 00", "seed"),
    ]
}

/// (1-based line, line) of every line of `text` that cites the outside note.
fn citations(text: &str) -> Vec<(usize, String)> {
    let phrases = citation_phrases();
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            let lower = line.to_lowercase();
            phrases.iter().any(|p| lower.contains(p.as_str()))
        })
        .map(|(i, line)| (i + 1, line.trim().to_string()))
        .collect()
}

/// Every `docs/NAME.md` written in `text` (as `docs/x.md`, `../docs/x.md`,
/// `` `docs/x.md` `` or a Markdown link), as `NAME.md`; web addresses are
/// not ours to check.
fn docs_pages(text: &str) -> Vec<String> {
    let mut pages = Vec::new();
    for (at, _) in text.match_indices("docs/") {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-') {
            continue; // `mydocs/`, `rustdocs/`
        }
        let word_start = text[..at]
            .rfind(|c: char| c.is_whitespace() || c == '(' || c == '`' || c == '"')
            .map_or(0, |i| i + 1);
        if text[word_start..at].contains("://") {
            continue;
        }
        let rest = &text[at + "docs/".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
            .collect();
        let name = name.trim_end_matches('.');
        if name.ends_with(".md") && name.len() > ".md".len() {
            pages.push(name.to_string());
        }
    }
    pages
}

/// The `targets` that name nothing under `base`.
fn absent(targets: Vec<String>, base: &Path) -> Vec<String> {
    targets
        .into_iter()
        .filter(|t| !base.join(t).exists())
        .collect()
}

/// The `docs/NAME.md` of `text` that are not in `docs_dir`.
fn missing_pages(text: &str, docs_dir: &Path) -> Vec<String> {
    absent(docs_pages(text), docs_dir)
}

/// The relative targets of Markdown links in `text` (`[a](target)`),
/// without their `#anchor`; web and in-page links are left out.
fn relative_links(text: &str) -> Vec<String> {
    let mut links = Vec::new();
    for (at, _) in text.match_indices("](") {
        let rest = &text[at + 2..];
        let Some(end) = rest.find(')') else { continue };
        let target = rest[..end].trim();
        if target.is_empty()
            || target.starts_with('#')
            || target.contains("://")
            || target.starts_with("mailto:")
        {
            continue;
        }
        let path = target.split('#').next().unwrap_or(target);
        links.push(path.to_string());
    }
    links
}

/// The relative links of `text`, read from a file in `base`, that resolve
/// to nothing.
fn broken_links(text: &str, base: &Path) -> Vec<String> {
    absent(relative_links(text), base)
}

/// The pages of `docs_dir` (but the index) that `index` does not link.
fn unindexed(index: &str, docs_dir: &Path) -> Vec<String> {
    let linked = relative_links(index);
    md_files(docs_dir)
        .into_iter()
        .filter_map(|p| Some(p.file_name()?.to_str()?.to_string()))
        .filter(|name| name != "README.md" && !linked.iter().any(|l| l == name))
        .collect()
}

fn md_files(dir: &Path) -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    pages.sort();
    pages
}

/// Every file under `path` (or `path` itself), build output left out.
fn walk(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_file() {
        out.push(path.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten() {
        let p = entry.path();
        let skipped = p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| SKIPPED.contains(&n));
        if !skipped {
            walk(&p, out);
        }
    }
}

/// (root-relative path, text) of every scanned file; bytes that are not
/// UTF-8 (the bad-input rows) are read lossily.
fn scanned_files() -> Vec<(String, String)> {
    let root = root();
    let mut paths = Vec::new();
    for top in SCANNED {
        walk(&root.join(top), &mut paths);
    }
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| {
            let bytes = std::fs::read(&p).ok()?;
            let rel = p.strip_prefix(&root).ok()?.display().to_string();
            Some((rel, String::from_utf8_lossy(&bytes).into_owned()))
        })
        .collect()
}

/// The text of each of `paths` among `files`; a path the scan did not
/// reach fails the test (a scan that reads nothing must not pass).
fn reached<'a>(files: &'a [(String, String)], paths: &[&str]) -> Vec<&'a str> {
    paths
        .iter()
        .map(|must| {
            files
                .iter()
                .find(|(p, _)| p == must)
                .map(|(_, text)| text.as_str())
                .unwrap_or_else(|| panic!("the scan did not reach {must}"))
        })
        .collect()
}

#[test]
fn the_citation_check_catches_a_citation_and_spares_request_seeds() {
    let text = format!(
        "//! Judging E19. The headline is the {}'s: the gap.\n\
         # Why it is shaped like this: the {} note\n\
         | GIL-libzim | the change ({} 001) is not released |\n\
         every `/work` request carries a fresh seed\n\
         fuzz inputs seeded from blocking-threads.yaml, seed=7\n",
        "seed", "seed", "SEED"
    );
    let found: Vec<usize> = citations(&text).into_iter().map(|(l, _)| l).collect();
    assert_eq!(found, vec![1, 2, 3], "{text}");
    assert!(citations("a fresh seed per request; the seeds of a run").is_empty());
}

#[test]
fn nothing_cites_a_document_outside_the_repository() {
    let files = scanned_files();
    // The scan reached the files the citations used to be in.
    reached(
        &files,
        &["README.md", "specs/E19.yaml", "runner/src/lib.rs"],
    );
    let mut hits = Vec::new();
    for (path, text) in &files {
        for (line, quote) in citations(text) {
            hits.push(format!("{path}:{line}: {quote}"));
        }
    }
    assert!(
        hits.is_empty(),
        "these send a reader to a document outside the repository; point them at \
         the page of docs/ that gives the reason (docs/README.md lists them), or state it:\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_page_check_catches_a_missing_page() {
    let docs = root().join("docs");
    let text = "see docs/fixed-work.md. Also ../docs/no-such-page.md and \
                [x](docs/gil-probe.md#controls), not https://example.org/docs/away.md";
    assert_eq!(
        docs_pages(text),
        vec!["fixed-work.md", "no-such-page.md", "gil-probe.md"]
    );
    assert_eq!(missing_pages(text, &docs), vec!["no-such-page.md"]);
    assert!(missing_pages("see docs/deployment-rule.md.", &docs).is_empty());
}

#[test]
fn every_docs_page_named_in_the_repository_exists() {
    let docs = root().join("docs");
    let files = scanned_files();
    let mut named = 0;
    let mut missing = Vec::new();
    // This file names missing pages on purpose (the synthetic cases).
    let this_file = "runner/tests/docs.rs";
    for (path, text) in files.iter().filter(|(p, _)| p != this_file) {
        named += docs_pages(text).len();
        for page in missing_pages(text, &docs) {
            missing.push(format!("{path}: docs/{page}"));
        }
    }
    // The README, the rows and the code (its help text included) do point there.
    let must = ["README.md", "specs/E19.yaml"];
    for (path, text) in must.iter().zip(reached(&files, &must)) {
        assert!(!docs_pages(text).is_empty(), "{path} names no docs/ page");
    }
    let code = files
        .iter()
        .filter(|(p, t)| p.starts_with("runner/src/") && !docs_pages(t).is_empty())
        .count();
    assert!(
        code >= 3,
        "only {code} files of runner/src name a docs/ page"
    );
    assert!(named >= 10, "only {named} docs/ references found");
    assert!(missing.is_empty(), "no such page:\n{}", missing.join("\n"));
}

#[test]
fn the_link_check_catches_a_broken_link_and_an_unindexed_page() {
    let docs = root().join("docs");
    let text = "[a](fixed-work.md#measured-here) [b](../README.md) [c](no-such.md) \
                [d](#top) [e](https://example.org/x.md)";
    assert_eq!(broken_links(text, &docs), vec!["no-such.md"]);
    let short_index = "[gap](gap-not-threshold.md)";
    let left = unindexed(short_index, &docs);
    assert!(left.contains(&"fixed-work.md".to_string()), "{left:?}");
    assert!(
        !left.contains(&"gap-not-threshold.md".to_string()),
        "{left:?}"
    );
}

#[test]
fn every_markdown_link_resolves_and_the_index_lists_every_page() {
    let root = root();
    let docs = root.join("docs");
    assert!(md_files(&docs).len() >= 10, "docs/ holds too few pages");
    let markdown: Vec<(String, String)> = scanned_files()
        .into_iter()
        .filter(|(p, _)| p.ends_with(".md"))
        .collect();
    reached(
        &markdown,
        &["README.md", "docs/README.md", "specs/README.md"],
    );
    let mut broken = Vec::new();
    for (path, text) in &markdown {
        let base = root.join(path);
        let base = base.parent().unwrap();
        for target in broken_links(text, base) {
            broken.push(format!("{path}: {target}"));
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    let index = std::fs::read_to_string(docs.join("README.md")).unwrap();
    let left = unindexed(&index, &docs);
    assert!(left.is_empty(), "docs/README.md does not list: {left:?}");
}
