//! The fault matrix: E19 against fixtures/faultserver, a real HTTP/1.1
//! process on 127.0.0.1 that misbehaves in one chosen way per test. Each
//! fault that spoils the measurement must end in "cannot judge" (exit 2)
//! with a reason naming the cause, within a bounded time, with every process
//! the server started gone. Two faults leave the measurement sound and are
//! checked for what they do break: a server ignoring SIGTERM must still be
//! gone (SIGKILL after the grace), and a server flooding stdout must not
//! flood the disk (the log is capped and says so).
//!
//! The reply faults (garbage status lines and headers, invalid or cut UTF-8,
//! a body past the cap, endless or mis-sized bodies, HTTP/1.0, a close in
//! mid-body, a reply nobody asked for) hit every `/work` request: each must
//! end in cannot judge naming its cause, well inside the default request
//! timeout, and never in a panic (exit 101).
//!
//! Every fault test has the same twin: `no_fault_gets_a_verdict_from_figures`
//! runs the same server with no fault and shows none of these causes firing.
//! Profiles are written per test into a temp dir (specs/servers/ lists real
//! servers only). Short `ready.timeout_ms`, `stop_grace_ms` and
//! `--request-timeout-ms` keep the whole file fast.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::root;
use serde_json::Value;

/// Request bound for every fault gate: long enough for 24 MiB of hashing
/// under load, short enough to keep the hang test quick.
const REQUEST_TIMEOUT_MS: u64 = 2000;
/// The profiles' SIGTERM-to-SIGKILL grace.
const GRACE_MS: u64 = 1000;
/// Any one fault gate, lock wait included, finishes inside this (it is a
/// hang detector, not a speed target: gates from other tests take turns on
/// the machine lock and count in it). The time to each verdict proper is
/// printed on the MATRIX line, from the server's start.
const BOUND: Duration = Duration::from_secs(600);
/// A reply fault breaks the first `/work` pair, so from the server's start
/// to the runner's exit it costs the server's start (ready timeout 5 s), at
/// most one request timeout and the stop grace. Under the 30 s default
/// request timeout, so a wait that ignores `--request-timeout-ms` fails here
/// (a hang detector, not a speed target).
const REPLY_FAULT_BOUND_S: f64 = 20.0;

struct Fault {
    dir: tempfile::TempDir,
    name: String,
}

impl Fault {
    /// A profile in a temp dir starting faultserver with `--fault fault`.
    fn new(fault: &str, extra: &[&str], ready_timeout_ms: u64) -> Self {
        let dir = tempfile::tempdir().unwrap();
        // The log file is named after the profile: one per test.
        let name = format!("fault-{fault}-{ready_timeout_ms}");
        let script = root().join("fixtures/faultserver/faultserver.py");
        let pidfile = dir.path().join("pids");
        let mut argv: Vec<String> = vec![
            "{python}".into(),
            script.display().to_string(),
            "--host".into(),
            "{host}".into(),
            "--port".into(),
            "{port}".into(),
            "--app-dir".into(),
            "{app_dir}".into(),
            "--fault".into(),
            fault.into(),
            "--pidfile".into(),
            pidfile.display().to_string(),
        ];
        argv.extend(extra.iter().map(|s| s.to_string()));
        argv.push("{knobs}".into());
        let profile = serde_json::json!({
            "name": name,
            "argv": argv,
            "knobs": { "threads": ["--threads", "{threads}"] },
            "ready": { "path": "/", "timeout_ms": ready_timeout_ms },
            "env": { "PYTHONUNBUFFERED": "1" },
            "stop_grace_ms": GRACE_MS,
        });
        // JSON is YAML: the profile loader reads it as is.
        std::fs::write(dir.path().join("profile.yaml"), profile.to_string()).unwrap();
        Self { dir, name }
    }

    fn profile(&self) -> PathBuf {
        self.dir.path().join("profile.yaml")
    }

    /// Runs E19 (2 trials) against this profile.
    fn gate(&self) -> Outcome {
        self.gate_args(&[])
    }

    fn gate_args(&self, extra: &[&str]) -> Outcome {
        let exe = assert_cmd::cargo::cargo_bin("runner");
        let started = Instant::now();
        let mut cmd = Command::new(exe);
        cmd.current_dir(root())
            .args(["gate", "E19", "--json", "--trials", "2", "--server"])
            .arg(self.profile())
            .arg("--request-timeout-ms")
            .arg(REQUEST_TIMEOUT_MS.to_string())
            .args(extra);
        let out = run_bounded(cmd, BOUND);
        let wall = started.elapsed();
        let ended = unix_now();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_ne!(
            out.status.code(),
            Some(101),
            "{}: the runner panicked:\n{stderr}",
            self.name
        );
        let report: Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}\nstderr:\n{stderr}"));
        let result = report["results"][0].clone();
        let pids = read_pids(&self.dir.path().join("pids"));
        // From the server's start to the runner's exit: the time to the
        // verdict without the wait for the machine lock (other gates).
        let after_start = pids.first().map(|p| ended - p.3).unwrap_or(f64::NAN);
        // The fault matrix in the report is read from these lines.
        eprintln!(
            "MATRIX {} | {} | exit {:?} | {:.1} s from server start to exit | wall {:.1} s | {}",
            self.name,
            result["verdict"],
            out.status.code(),
            after_start,
            wall.as_secs_f64(),
            result["reason"]
                .as_str()
                .unwrap_or("")
                .lines()
                .next()
                .unwrap_or("")
        );
        Outcome {
            code: out.status.code().unwrap_or(-1),
            result,
            after_start_s: after_start,
            pids,
            log: root().join(format!(".gates/logs/E19.{}.log", self.name)),
        }
    }
}

/// Runs `cmd` to completion, killing it (and failing) after `bound`.
fn run_bounded(mut cmd: Command, bound: Duration) -> std::process::Output {
    use std::process::Stdio;
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let watchdog = std::thread::spawn(move || {
        let deadline = Instant::now() + bound;
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
            // Stop watching once the runner is gone (reaped or zombie).
            if !alive(pid as i32) {
                return false;
            }
        }
        // SAFETY: signalling the runner we spawned.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        true
    });
    let out = child.wait_with_output().unwrap();
    assert!(
        !watchdog.join().unwrap(),
        "the runner was still running after {bound:?}: a wait is unbounded"
    );
    out
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// (role, pid, pgid, start time) lines the fault server wrote.
fn read_pids(file: &Path) -> Vec<(String, i32, i32, f64)> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some((
                f.next()?.to_string(),
                f.next()?.parse().ok()?,
                f.next()?.parse().ok()?,
                f.next()?.parse().ok()?,
            ))
        })
        .collect()
}

/// Whether `pid` is a live (non-zombie) process.
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat
                .rfind(')')
                .and_then(|i| stat[i + 1..].split_whitespace().next());
            !matches!(state, Some("Z") | Some("X"))
        }
        Err(_) => {
            // No /proc (macOS): signal 0 probes existence.
            // SAFETY: signal 0 only checks.
            unsafe { libc::kill(pid, 0) == 0 }
        }
    }
}

struct Outcome {
    code: i32,
    result: Value,
    /// From the server's start to the runner's exit, in seconds.
    after_start_s: f64,
    pids: Vec<(String, i32, i32, f64)>,
    log: PathBuf,
}

impl Outcome {
    fn reason(&self) -> &str {
        self.result["reason"].as_str().unwrap_or("")
    }

    /// Cannot judge, exit 2, and a reason holding every one of `causes`.
    fn assert_cannot_judge(&self, causes: &[&str]) {
        assert_eq!(
            self.result["verdict"],
            "cannot-judge",
            "reason: {}",
            self.reason()
        );
        assert_eq!(self.code, 2, "reason: {}", self.reason());
        for cause in causes {
            assert!(
                self.reason().contains(cause),
                "the reason does not name {cause:?}: {}",
                self.reason()
            );
        }
    }

    /// Every process the fault server recorded, its process group, and the
    /// group in the report are gone; and the server did record itself (or
    /// the check would pass vacuously).
    fn assert_nothing_left(&self) {
        assert!(
            !self.pids.is_empty(),
            "the fault server recorded no process; nothing was checked"
        );
        for (role, pid, pgid, _) in &self.pids {
            assert!(!alive(*pid), "{role} {pid} survived the runner");
            assert!(
                !runner::host::process::group_alive(*pgid),
                "{role}'s process group {pgid} has live members"
            );
        }
        if let Some(pgid) = self.result["servers"][0]["pgid"].as_i64() {
            assert!(!runner::host::process::group_alive(pgid as i32));
            assert_eq!(self.result["servers"][0]["survivors"], false);
        }
    }

    fn ran_figures(&self) -> bool {
        !self.result["figures"].is_null() && self.result["run"]["broken"].is_null()
    }
}

#[test]
fn no_fault_gets_a_verdict_from_figures() {
    // The twin of every test below: the same server, profile shape and
    // limits with no fault reaches figures, so each cause below is the fault's.
    let f = Fault::new("none", &[], 5000);
    let out = f.gate();
    assert!(
        out.ran_figures(),
        "a healthy faultserver must be measurable: {}",
        out.reason()
    );
    assert!(!out.reason().contains("server would not start"));
    out.assert_nothing_left();
}

#[test]
fn exits_at_start() {
    let out = Fault::new("exit-at-start", &[], 5000).gate();
    out.assert_cannot_judge(&["exited before it was ready", "exit status: 3"]);
    out.assert_nothing_left();
}

#[test]
fn never_binds() {
    let out = Fault::new("never-bind", &[], 1500).gate();
    out.assert_cannot_judge(&["not ready within 1500 ms", "cannot connect"]);
    out.assert_nothing_left();
}

#[test]
fn binds_but_never_answers() {
    let out = Fault::new("bind-no-answer", &[], 1500).gate();
    out.assert_cannot_judge(&["not ready within 1500 ms", "no reply within"]);
    out.assert_nothing_left();
}

#[test]
fn answers_500() {
    let out = Fault::new("http-500", &[], 5000).gate();
    out.assert_cannot_judge(&["broken measurement", "HTTP 500"]);
    out.assert_nothing_left();
}

#[test]
fn returns_a_wrong_digest() {
    let out = Fault::new("wrong-digest", &[], 5000).gate();
    out.assert_cannot_judge(&["broken measurement", "wrong digest"]);
    out.assert_nothing_left();
}

#[test]
fn resets_the_connection_mid_response() {
    let out = Fault::new("reset-mid-response", &[], 5000).gate();
    out.assert_cannot_judge(&[
        "broken measurement",
        "request failed on connection",
        "reset by peer",
    ]);
    out.assert_nothing_left();
}

#[test]
fn hangs_one_request_forever() {
    let out = Fault::new("hang-one", &[], 5000).gate();
    out.assert_cannot_judge(&[
        "broken measurement",
        &format!("no reply within {REQUEST_TIMEOUT_MS} ms"),
    ]);
    out.assert_nothing_left();
}

#[test]
fn ready_after_10_s_with_a_shorter_ready_timeout() {
    let out = Fault::new("slow-ready", &["--ready-after-s", "10"], 2000).gate();
    out.assert_cannot_judge(&["not ready within 2000 ms", "HTTP 503"]);
    out.assert_nothing_left();
}

#[test]
fn ready_after_10_s_with_a_longer_ready_timeout_gets_through() {
    // The twin: the same slow server with room to start is measured.
    let out = Fault::new("slow-ready", &["--ready-after-s", "10"], 20_000).gate();
    assert!(
        out.ran_figures(),
        "a slow but healthy server must be measured: {}",
        out.reason()
    );
    let ready_ms = out.result["servers"][0]["ready_ms"].as_f64().unwrap();
    assert!(ready_ms >= 10_000.0, "ready after {ready_ms} ms");
    out.assert_nothing_left();
}

#[test]
fn floods_stdout() {
    // About 150 MB/s of output: the log keeps the first LOG_CAP_BYTES and
    // the end, and says how much it dropped; the verdict names the flood.
    let out = Fault::new("flood-stdout", &[], 5000).gate();
    out.assert_cannot_judge(&["past its 8 MiB log cap", "measuring its logging"]);
    assert!(
        out.result["servers"][0]["log_dropped_bytes"]
            .as_u64()
            .unwrap()
            > 0
    );
    out.assert_nothing_left();
    let size = std::fs::metadata(&out.log).map(|m| m.len()).unwrap_or(0);
    let cap = runner::server::logdrain::LOG_CAP_BYTES;
    assert!(
        size >= cap,
        "the flood did not reach the cap: {size} bytes in {}",
        out.log.display()
    );
    assert!(
        size <= cap + 64 * 1024,
        "the log grew past its cap: {size} bytes"
    );
    let log_end = std::fs::read(&out.log).unwrap();
    let log_end = String::from_utf8_lossy(&log_end[log_end.len() - 20_000..]);
    assert!(
        log_end.contains("bytes more than the log keeps"),
        "the log does not say it was cut"
    );
    let tail = out.result["log_tail"].as_str().unwrap_or("");
    assert!(
        tail.contains("bytes more than the log keeps"),
        "the report's log tail does not name the flood: {tail}"
    );
}

#[test]
fn leaves_a_grandchild_holding_the_port() {
    let out = Fault::new("grandchild", &[], 5000).gate();
    out.assert_cannot_judge(&["exited before it was ready", "exit status: 0"]);
    let grandchild: Vec<_> = out.pids.iter().filter(|p| p.0 == "grandchild").collect();
    assert_eq!(grandchild.len(), 1, "pids: {:?}", out.pids);
    let leader = out.pids.iter().find(|p| p.0 == "leader").unwrap();
    assert_eq!(
        grandchild[0].2, leader.2,
        "the grandchild must be in the leader's process group for this test to mean anything"
    );
    out.assert_nothing_left();
}

#[test]
fn ignores_sigterm() {
    // The measurement itself is sound, so the verdict is the figures'; what
    // the fault tests is the stop: SIGTERM is ignored, so the runner waits
    // the grace and then SIGKILLs the group, and nothing survives.
    let f = Fault::new("ignore-sigterm", &[], 5000);
    let out = f.gate();
    assert!(out.ran_figures(), "{}", out.reason());
    // The report says the group had to be killed.
    assert_eq!(
        out.result["servers"][0]["stopped"], "killed",
        "{}",
        out.result["servers"]
    );
    let elapsed_ms = out.result["elapsed_ms"].as_f64().unwrap();
    let ready_ms = out.result["servers"][0]["ready_ms"].as_f64().unwrap();
    assert!(
        elapsed_ms >= ready_ms + GRACE_MS as f64,
        "the stop took under the grace ({elapsed_ms} ms in all): SIGTERM was not ignored, so this tested nothing"
    );
    out.assert_nothing_left();
}

// ---- reply faults ----------------------------------------------------------

/// Runs E19 against `fault` (with `extra` flags for faultserver) and checks
/// the contract every reply fault shares: cannot judge (exit 2, never 101),
/// a broken measurement whose reason names every one of `causes`, inside
/// [`REPLY_FAULT_BOUND_S`], and no process left.
fn reply_fault(fault: &str, extra: &[&str], causes: &[&str]) -> Outcome {
    let out = Fault::new(fault, extra, 5000).gate();
    let mut all = vec!["broken measurement"];
    all.extend_from_slice(causes);
    out.assert_cannot_judge(&all);
    assert!(
        out.after_start_s < REPLY_FAULT_BOUND_S,
        "{fault}: {:.1} s from the server's start to the verdict; some wait ignores --request-timeout-ms",
        out.after_start_s
    );
    out.assert_nothing_left();
    out
}

#[test]
fn reply_with_a_garbage_status_line() {
    // Every variant of the list comes first or second at one of these
    // offsets (the first /work pair is the two requests that break).
    for at in ["0", "2", "4"] {
        reply_fault(
            "garbage-status",
            &["--fault-at", at],
            &["request failed on connection", "invalid HTTP"],
        );
    }
}

#[test]
fn reply_with_garbage_headers() {
    for at in ["0", "2", "4"] {
        reply_fault(
            "garbage-headers",
            &["--fault-at", at],
            &["request failed on connection", "invalid HTTP header parsed"],
        );
    }
}

#[test]
fn reply_body_of_invalid_utf8() {
    // Read lossily (U+FFFD is 3 bytes, so the old cut at 80 bytes of the
    // lossy text fell inside one) and quoted clipped, with the length.
    let out = reply_fault(
        "invalid-utf8",
        &[],
        &["wrong digest", "\u{fffd}", "… (200 bytes)"],
    );
    assert!(out.reason().len() < 1000, "{}", out.reason());
}

#[test]
fn reply_body_cut_inside_a_character() {
    // The reply that made `runner gate E19` panic at pair_ratio.rs:197:
    // HTTP 500 and 300 "€", here with the last one cut in half.
    let out = reply_fault("cut-char", &[], &["HTTP 500", "€€€", "… (899 bytes)"]);
    assert!(out.reason().len() < 1000, "{}", out.reason());
}

#[test]
fn reply_body_past_the_cap() {
    reply_fault(
        "huge-body",
        &[],
        &[&format!(
            "the body is over the runner's {}-byte cap",
            runner::http::MAX_BODY_BYTES
        )],
    );
}

#[test]
fn reply_body_chunked_without_end() {
    reply_fault(
        "endless-chunked",
        &[],
        &[&format!(
            "the headers came but the body did not end within {REQUEST_TIMEOUT_MS} ms"
        )],
    );
}

#[test]
fn reply_content_length_too_long() {
    reply_fault(
        "length-long",
        &[],
        &[&format!(
            "the headers came but the body did not end within {REQUEST_TIMEOUT_MS} ms"
        )],
    );
}

#[test]
fn reply_content_length_too_short() {
    // The body read is the digest cut short; the rest spills into the
    // connection, which is never used again.
    reply_fault("length-short", &[], &["wrong digest"]);
}

#[test]
fn reply_in_http_1_0() {
    reply_fault(
        "http10",
        &[],
        &[
            "the kept-alive connection ended",
            "HTTP/1.0 without keep-alive",
        ],
    );
}

#[test]
fn reply_closed_mid_body() {
    reply_fault(
        "close-mid-body",
        &[],
        &[
            "reading the body",
            "end of file before message length reached",
        ],
    );
}

#[test]
fn reply_to_a_request_never_sent() {
    // The extra reply comes in the same write as the right one, so the
    // client reads it while idle: a message nobody asked for. Were it read
    // only once the next request was out, it would answer that request,
    // whose digest it cannot match; either way it is caught, never used.
    let out = reply_fault("unsolicited-reply", &[], &[]);
    let reason = out.reason();
    assert!(
        reason.contains("the kept-alive connection ended: received unexpected message")
            || reason.contains("wrong digest") && reason.contains("\"unsolicited\""),
        "the reason does not name the unsolicited reply: {reason}"
    );
}

#[test]
fn reply_text_reaches_every_report_clipped_and_whole() {
    // The cut-character reply's quote flows into the JUnit, Markdown and
    // JSON reports: each must be written, parse, and carry the characters
    // whole (the clip backs off to a boundary; the cut one is not quoted).
    let f = Fault::new("cut-char", &[], 5000);
    let junit = f.dir.path().join("junit.xml");
    let markdown = f.dir.path().join("summary.md");
    let out = f.gate_args(&[
        "--junit",
        junit.to_str().unwrap(),
        "--markdown",
        markdown.to_str().unwrap(),
    ]);
    out.assert_cannot_judge(&["HTTP 500", "€€€", "… (899 bytes)"]);
    out.assert_nothing_left();
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let error = doc
        .descendants()
        .find(|n| n.has_tag_name("error"))
        .expect("cannot judge is a JUnit <error>");
    let message = error.attribute("message").unwrap_or("");
    assert!(
        message.contains("€€€") && message.contains("… (899 bytes)"),
        "{message}"
    );
    assert!(!message.contains('\u{fffd}'), "{message}");
    let md = std::fs::read_to_string(&markdown).unwrap();
    assert!(md.contains("cannot judge"), "{md}");
}
