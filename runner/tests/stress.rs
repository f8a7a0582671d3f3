//! `runner stress`: repeats a gate, counts verdicts, applies a background
//! load it starts and kills itself. The figures (how flaky E19 is) come from
//! bench/stress.py; these tests check the command's behaviour, kept short
//! with `--trials 2` and few runs.

mod common;

#[cfg(target_os = "linux")]
use std::process::{Command, Stdio};
#[cfg(target_os = "linux")]
use std::time::{Duration, Instant};

#[cfg(target_os = "linux")]
use common::root;
use common::{edited_row, runner};
use predicates::prelude::PredicateBooleanExt;
use predicates::str::contains;
use serde_json::Value;

fn stress_json(args: &[&str]) -> (i32, Value) {
    let out = runner()
        .arg("stress")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}):\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), v)
}

fn assert_loads_gone(summary: &Value, expected: usize) {
    let pgids = summary["load_pgids"].as_array().unwrap();
    assert_eq!(pgids.len(), expected, "{summary}");
    for p in pgids {
        assert!(
            !runner::host::process::group_alive(p.as_i64().unwrap() as i32),
            "load {p} survived"
        );
    }
}

#[test]
fn counts_every_run_and_kills_each_load() {
    let (code, s) = stress_json(&["E19", "--runs", "2", "--trials", "2", "--noise", "burst"]);
    assert_eq!(code, 0, "{s}");
    assert_eq!(s["runs"], 2);
    let counted: u64 = s["verdicts"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(counted, 2);
    assert_eq!(s["noise"], "burst");
    // One load per gate, each stopped when its gate ended.
    assert_loads_gone(&s, 2);
    assert!(!s["figures"]["capacity"].is_null(), "{}", s["figures"]);
}

#[test]
fn a_verdict_against_the_expectation_is_counted_wrong_and_exits_1() {
    // One thread serialises the releasing view too: E19 fails, which
    // `--expect pass` counts as wrong. (The twin of the run above, whose
    // verdicts had no expectation to contradict.)
    let dir = tempfile::tempdir().unwrap();
    let row = edited_row(dir.path(), "E19-1t.yaml", &[("threads: 2", "threads: 1")]);
    let (code, s) = stress_json(&[
        row.to_str().unwrap(),
        "--runs",
        "1",
        "--trials",
        "3",
        "--expect",
        "pass",
    ]);
    let fails = s["verdicts"]["fail"].as_u64().unwrap_or(0);
    assert_eq!(s["wrong"].as_u64().unwrap(), fails, "{s}");
    if fails == 1 {
        assert_eq!(code, 1);
    } else {
        // The machine was too busy to judge: never counted wrong.
        assert_eq!(s["verdicts"]["cannot-judge"], 1, "{s}");
        assert_eq!(code, 0);
    }
    assert_loads_gone(&s, 0);
}

#[test]
fn bad_stress_flags_name_the_flag() {
    runner()
        .args(["stress", "E19", "--runs", "1", "--noise", "loud"])
        .assert()
        .code(2)
        .stderr(contains("'loud'").and(contains("--noise")))
        .stderr(contains("possible values: none, burst, spin"));
    runner()
        .args(["stress", "E19", "--runs", "1", "--expect", "cannot-judge"])
        .assert()
        .code(2)
        .stderr(contains("'cannot-judge'").and(contains("--expect")))
        .stderr(contains("possible values: pass, fail"));
    runner()
        .args(["stress", "E19", "--runs", "0"])
        .assert()
        .code(2)
        .stderr(contains("--runs 0"));
}

#[cfg(target_os = "linux")]
#[test]
fn sigterm_mid_stress_stops_the_server_and_the_load() {
    let exe = assert_cmd::cargo::cargo_bin("runner");
    let child = Command::new(exe)
        .current_dir(root())
        .args([
            "stress", "E19", "--runs", "20", "--trials", "200", "--noise", "spin", "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait (bounded) until the first gate's server and load are up: the
    // load starts on the server-ready event, so find it running.
    let deadline = Instant::now() + Duration::from_secs(300);
    let pgid = child.id() as i32;
    loop {
        assert!(Instant::now() < deadline, "no load within 300 s");
        let loads = descendants_running(pgid, "import sys, time");
        if !loads.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    let sent = Instant::now();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    assert_eq!(out.status.code(), Some(143));
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["interrupted"], "SIGTERM");
    assert_loads_gone(&s, 1);
    assert!(
        descendants_running(pgid, "import sys, time").is_empty(),
        "a load survived"
    );
    assert!(took < Duration::from_secs(10), "took {took:?} to stop");
}

#[cfg(target_os = "linux")]
/// Pids of live processes whose parent is `parent` and whose command line
/// contains `needle`.
fn descendants_running(parent: i32, needle: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.first() == Some(&"Z") || f.get(1).and_then(|p| p.parse().ok()) != Some(parent) {
            continue;
        }
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmd).contains(needle) {
            out.push(pid);
        }
    }
    out
}
