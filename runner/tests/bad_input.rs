//! Bad input: every file in runner/tests/bad_input/ (malformed rows and
//! profiles: wrong types, unknown keys, missing fields, huge numbers, zero or
//! negative trials, empty files, non-UTF-8 bytes, deep nesting, aliases and
//! billion laughs) is refused with exit 2 and a `file:line:` message, never
//! a panic (exit 101), never a hang. Then a bounded fuzz of both loaders.
//!
//! The fuzz runs `FUZZ_CASES` inputs per strategy (default 1000, about a
//! seconds); bench/fuzz.sh runs it longer and reports how many were tried.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::root;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// No loader call may take longer than this: far beyond any real parse
/// (microseconds; the 20,000-deep nesting corpus files take about 2.6 s of
/// CPU in a debug build, which a loaded 2-core machine stretched past 10 s),
/// short enough that a hang fails instead of stalling CI.
const LOAD_BOUND: Duration = Duration::from_secs(30);

fn corpus(kind: &str) -> Vec<PathBuf> {
    let dir = root().join("runner/tests/bad_input").join(kind);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(
        files.len() >= 20,
        "the {kind} corpus in {} is missing",
        dir.display()
    );
    files
}

/// Runs the runner with `args`, killing it after `LOAD_BOUND`.
fn runner_bounded(args: &[&std::ffi::OsStr]) -> (Output, Duration) {
    let exe = assert_cmd::cargo::cargo_bin("runner");
    let started = Instant::now();
    let child = Command::new(exe)
        .current_dir(root())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(LOAD_BOUND) {
        Ok(out) => (out.unwrap(), started.elapsed()),
        Err(_) => {
            // SAFETY: signalling the runner we spawned.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("runner {args:?} still running after {LOAD_BOUND:?}: a hang");
        }
    }
}

/// Whether `stderr` names `file` followed by `:LINE:`.
fn names_file_and_line(stderr: &str, file: &Path) -> bool {
    let name = format!("{}:", file.display());
    stderr.match_indices(&name).any(|(i, _)| {
        let rest = &stderr[i + name.len()..];
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        digits > 0 && rest[digits..].starts_with(':')
    })
}

/// Every file refused with exit 2 and `file:line:`, collecting every miss.
fn check_corpus(kind: &str, args_for: impl Fn(&Path) -> Vec<std::ffi::OsString>) {
    let mut misses = Vec::new();
    for file in corpus(kind) {
        let args = args_for(&file);
        let refs: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let (out, _) = runner_bounded(&refs);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code();
        if code == Some(101) || stderr.contains("panicked") {
            misses.push(format!("{}: PANIC\n{stderr}", file.display()));
        } else if code != Some(2) {
            misses.push(format!("{}: exit {code:?}\n{stderr}", file.display()));
        } else if !names_file_and_line(&stderr, &file) {
            misses.push(format!("{}: no file:line in\n{stderr}", file.display()));
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("\n\n"));
}

#[test]
fn every_bad_row_is_refused_with_file_and_line() {
    check_corpus("rows", |f| vec!["check".into(), f.into()]);
}

#[test]
fn every_bad_profile_is_refused_with_file_and_line() {
    // `--python` points nowhere: should a bad profile ever load, the run
    // stops at the interpreter (and fails this test) instead of starting a
    // server.
    check_corpus("profiles", |f| {
        vec![
            "gate".into(),
            "E19".into(),
            "--python".into(),
            "/nonexistent/python3".into(),
            "--server".into(),
            f.into(),
        ]
    });
}

#[test]
fn the_file_and_line_check_can_fail() {
    // The twin of the two tests above: a message without a line, another
    // file's name, and a good row are all told apart.
    let f = Path::new("/x/bad.yaml");
    assert!(names_file_and_line("error: /x/bad.yaml:3:1: missing", f));
    assert!(!names_file_and_line("error: /x/bad.yaml: is empty", f));
    assert!(!names_file_and_line("error: /x/other.yaml:3:1: missing", f));
    let good = root().join("specs/E19.yaml");
    let (out, _) = runner_bounded(&["check".as_ref(), good.as_os_str()]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn an_oversized_row_is_refused_without_reading_it_whole() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.yaml");
    let mut text = std::fs::read_to_string(root().join("specs/E19.yaml")).unwrap();
    text.push_str(&format!("# {}\n", "x".repeat(300 * 1024)));
    std::fs::write(&big, text).unwrap();
    let (out, _) = runner_bounded(&["check".as_ref(), big.as_os_str()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(names_file_and_line(&stderr, &big), "{stderr}");
    assert!(stderr.contains("bytes"), "{stderr}");
}

// ---- fuzz ----------------------------------------------------------------

fn fuzz_cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

/// Calls `f` on another thread; panics if it takes over `LOAD_BOUND`.
/// A panic inside `f` is returned as Err with its message.
fn bounded<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        let _ = tx.send(r);
    });
    match rx.recv_timeout(LOAD_BOUND) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(p)) => Err(p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic".into())),
        Err(_) => panic!("a loader took over {LOAD_BOUND:?}: a hang"),
    }
}

/// A row or profile as YAML lines, for line-level mutation.
fn seeds() -> Vec<String> {
    vec![
        std::fs::read_to_string(root().join("specs/E19.yaml")).unwrap(),
        std::fs::read_to_string(root().join("specs/ASGI-loop.yaml")).unwrap(),
        std::fs::read_to_string(root().join("specs/servers/granian.yaml")).unwrap(),
        std::fs::read_to_string(root().join("specs/servers/uvicorn.yaml")).unwrap(),
        std::fs::read_to_string(root().join("specs/sweeps/blocking-threads.yaml")).unwrap(),
    ]
}

/// Fragments that stress YAML and our validation in particular.
const TOKENS: &[&str] = &[
    "",
    " ",
    "\t",
    "\n",
    ":",
    ": ",
    "- ",
    "[",
    "]",
    "{",
    "}",
    ",",
    "&a ",
    "*a",
    "<<: *a",
    "!!binary ",
    "!shell ",
    "~",
    "null",
    "-1",
    "0",
    "4294967296",
    "99999999999999999999",
    "1e400",
    ".nan",
    ".inf",
    "-.inf",
    "\"",
    "'",
    "|",
    ">-",
    "#",
    "---",
    "...",
    "\u{feff}",
    "\u{0}",
    "\u{7f}",
    "é",
    "{knobs}",
    "{host}",
    "{nope}",
    "{",
    "}",
    "$(true)",
    "id:",
    "trials:",
    "min:",
    "max:",
    "argv:",
    "ready:",
    "margin:",
    "work_kib:",
    "role: control",
    "sweep:",
    "paths:",
    "threads: [1, 2]",
    "duration: 5s",
    "app_dir: .",
    "role: under-test",
    "path: /work",
    "interface: asgi",
    "interface: wsgi",
    "env: {A: \"{threads}\"}",
    "app: asgiapp",
];

fn mutate(seed: &str, edits: &[(u16, u8, u16, String)]) -> String {
    let mut lines: Vec<String> = seed.lines().map(String::from).collect();
    for (at, op, n, text) in edits {
        if lines.is_empty() {
            lines.push(String::new());
        }
        let i = *at as usize % lines.len();
        match op % 6 {
            0 => {
                lines.remove(i);
            }
            1 => lines.insert(i, text.clone()),
            2 => {
                let line = &mut lines[i];
                let cut = (*n as usize % (line.len() + 1)).min(line.len());
                let cut = (0..=cut)
                    .rev()
                    .find(|c| line.is_char_boundary(*c))
                    .unwrap_or(0);
                line.insert_str(cut, text);
            }
            3 => {
                let dup = lines[i].clone();
                lines.insert(i, dup);
            }
            4 => {
                let j = *n as usize % lines.len();
                lines.swap(i, j);
            }
            _ => {
                // Replace a value: everything after the first ':'.
                if let Some(c) = lines[i].find(':') {
                    lines[i].truncate(c + 1);
                    lines[i].push(' ');
                    lines[i].push_str(text);
                }
            }
        }
    }
    lines.join("\n")
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(TOKENS).prop_map(String::from),
        1 => any::<String>(),
        1 => (1usize..4, proptest::sample::select(TOKENS)).prop_map(|(n, t)| t.repeat(n)),
    ]
}

/// Inputs: mutated real rows/profiles (most), arbitrary text, and raw bytes.
fn input() -> impl Strategy<Value = Vec<u8>> {
    let seeds = std::sync::Arc::new(seeds());
    let edits = proptest::collection::vec((any::<u16>(), any::<u8>(), any::<u16>(), token()), 1..8);
    prop_oneof![
        6 => (0usize..3, edits).prop_map(move |(s, e)| mutate(&seeds[s], &e).into_bytes()),
        2 => any::<String>().prop_map(String::into_bytes),
        1 => proptest::collection::vec(any::<u8>(), 0..512),
    ]
}

#[test]
fn fuzz_the_row_and_profile_loaders() {
    let cases = fuzz_cases();
    let tried = std::sync::Arc::new(AtomicU64::new(0));
    let accepted = std::sync::Arc::new(AtomicU64::new(0));
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&input(), |bytes| {
        tried.fetch_add(1, Ordering::Relaxed);
        // Rows: through the same read path as files (UTF-8 and size checks).
        let file = dir.path().join("fuzz.yaml");
        std::fs::write(&file, &bytes).unwrap();
        let (f, a) = (file.clone(), accepted.clone());
        let row = bounded(move || {
            let r = runner::spec::row::load_row(&f);
            if r.is_ok() {
                a.fetch_add(1, Ordering::Relaxed);
            }
            r.err().map(|e| (e.to_string(), e.location.is_some()))
        });
        let row = row.map_err(|p| TestCaseError::fail(format!("load_row panicked: {p}")))?;
        if let Some((message, located)) = row {
            prop_assert!(located, "no line in: {message}");
        }
        // Profiles: load_profile reads a path.
        let f = file.clone();
        let profile = bounded(move || {
            runner::spec::profile::load_profile(&f)
                .err()
                .map(|e| (e.to_string(), e.location.is_some()))
        });
        let profile =
            profile.map_err(|p| TestCaseError::fail(format!("load_profile panicked: {p}")))?;
        if let Some((message, located)) = profile {
            prop_assert!(located, "no line in: {message}");
        }
        // Sweep rows, under their source row's file name so the id check passes and
        // the flags' checks are reached.
        let sweep_file = dir.path().join("blocking-threads.yaml");
        std::fs::write(&sweep_file, &bytes).unwrap();
        let (f, a) = (sweep_file, accepted.clone());
        let sweep = bounded(move || {
            let r = runner::sweep::row::load(&f, &root().join("fixtures/bareapp"));
            if r.is_ok() {
                a.fetch_add(1, Ordering::Relaxed);
            }
            r.err().map(|e| (e.to_string(), e.location.is_some()))
        });
        let sweep =
            sweep.map_err(|p| TestCaseError::fail(format!("sweep row load panicked: {p}")))?;
        if let Some((message, located)) = sweep {
            prop_assert!(located, "no line in: {message}");
        }
        // And parse_row on the text as given, where it is text.
        if let Ok(text) = String::from_utf8(bytes) {
            let f = file.clone();
            bounded(move || {
                let _ = runner::spec::row::parse_row(&f, &text);
            })
            .map_err(|p| TestCaseError::fail(format!("parse_row panicked: {p}")))?;
        }
        Ok(())
    });
    let took = started.elapsed();
    // bench/fuzz.sh reads this line.
    eprintln!(
        "fuzz: {} inputs tried ({} loaded as gate or sweep rows) in {:.1} s",
        tried.load(Ordering::Relaxed),
        accepted.load(Ordering::Relaxed),
        took.as_secs_f64()
    );
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(tried.load(Ordering::Relaxed) >= cases as u64);
}
