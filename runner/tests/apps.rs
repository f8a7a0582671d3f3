//! A user's own app, end to end: `fixtures/libapp` (real libraries, no `/`
//! route, per-thread state built on first use) through every command that
//! takes `--app` (sweep, advise), on granian. Each expected answer has its
//! twin: a server that sends no reply still ends at the ready timeout with
//! its hint; a status asked for and not given is said at once, without it;
//! a slow view is slow, a broken one still ERRORS.
//!
//! The /matmul view needs numpy from `runner prepare --rows all` (the
//! GIL-numpy row's pin); these tests use the stdlib views only.

mod common;

use std::path::{Path, PathBuf};
use std::time::Instant;

use common::{root, runner};
use serde_json::Value;

fn libapp() -> PathBuf {
    root().join("fixtures/libapp")
}

/// `runner sweep ARGS` on libapp; the JSON report, exit code and stderr.
fn sweep(args: &[&str]) -> (i32, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("s.json");
    let out = runner()
        .arg("sweep")
        .args(["--app", "app:app", "--app-dir"])
        .arg(libapp())
        .args(args)
        .arg("--json-file")
        .arg(&json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = std::fs::read_to_string(&json).unwrap_or_default();
    let report = serde_json::from_str(&report)
        .unwrap_or_else(|e| panic!("no JSON report ({e}); stderr:\n{stderr}"));
    (out.status.code().unwrap_or(-1), report, stderr)
}

/// A granian profile copy in `dir` with `ready` replaced.
fn granian_with_ready(dir: &Path, ready: &str) -> PathBuf {
    let source = std::fs::read_to_string(root().join("specs/servers/granian.yaml")).unwrap();
    let mut out = String::new();
    let mut skipping = false;
    for line in source.lines() {
        if line.starts_with("ready:") {
            out.push_str(ready);
            out.push('\n');
            skipping = true;
            continue;
        }
        if skipping && line.starts_with(' ') {
            continue;
        }
        skipping = false;
        out.push_str(line);
        out.push('\n');
    }
    let path = dir.join("granian-ready.yaml");
    std::fs::write(&path, out.replace("name: granian", "name: granian-ready")).unwrap();
    path
}

/// A profile whose server binds and listens but never answers.
fn deaf_profile(dir: &Path) -> PathBuf {
    let script = root().join("fixtures/faultserver/faultserver.py");
    let profile = serde_json::json!({
        "name": "deaf",
        "argv": ["{python}", script.display().to_string(), "--host", "{host}", "--port", "{port}",
                 "--app-dir", "{app_dir}", "--fault", "bind-no-answer", "{knobs}"],
        "knobs": { "threads": ["--threads", "{threads}"] },
        "ready": { "path": "/", "timeout_ms": 1500 },
        "env": { "PYTHONUNBUFFERED": "1" },
        "stop_grace_ms": 1000,
    });
    let path = dir.join("deaf.yaml");
    std::fs::write(&path, profile.to_string()).unwrap();
    path
}

const SHORT: [&str; 6] = ["--threads", "1", "--duration", "400ms", "--warmup", "0s"];

#[test]
fn an_app_with_no_root_route_is_ready_at_once_and_a_deaf_server_is_not() {
    // libapp answers 404 on / and polls the route under test by default.
    let started = Instant::now();
    let (code, j, stderr) = sweep(&[&["--path", "/wait?ms=5"][..], &SHORT].concat());
    let s = &j["settings"][0];
    assert_eq!((code, s["status"].as_str()), (0, Some("clean")), "{stderr}");
    let ready_ms = s["server"]["ready_ms"].as_f64().unwrap();
    // granian's ready timeout is 20 s: a wait for a 200 on / would end there.
    assert!(ready_ms < 10_000.0, "ready after {ready_ms} ms");
    // --ready-path / takes the 404 as an answer too: the server is up.
    let (code, j, stderr) =
        sweep(&[&["--path", "/wait?ms=5", "--ready-path", "/"][..], &SHORT].concat());
    assert_eq!(
        (code, j["settings"][0]["status"].as_str()),
        (0, Some("clean")),
        "{stderr}"
    );
    assert!(started.elapsed().as_secs() < 60);

    // The twin: a server that never answers still ends at its ready
    // timeout, with the hint to raise it.
    let dir = tempfile::tempdir().unwrap();
    let deaf = deaf_profile(dir.path());
    let (code, j, _) = sweep(
        &[
            &["--path", "/wait?ms=5", "--server", deaf.to_str().unwrap()][..],
            &SHORT,
        ]
        .concat(),
    );
    let reason = j["settings"][0]["reason"].as_str().unwrap_or_default();
    assert_ne!(code, 0);
    assert!(
        reason.contains("not ready within 1500 ms")
            && reason.contains("got no HTTP reply")
            && reason.contains("raise `ready.timeout_ms`"),
        "{reason}"
    );
}

#[test]
fn a_status_asked_for_and_not_given_is_said_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let profile = granian_with_ready(
        dir.path(),
        "ready:\n  path: /\n  timeout_ms: 20000\n  status: 200",
    );
    let server = profile.to_str().unwrap();
    let (code, j, _) = sweep(
        &[
            &[
                "--path",
                "/wait?ms=5",
                "--ready-path",
                "/",
                "--server",
                server,
            ][..],
            &SHORT,
        ]
        .concat(),
    );
    let reason = j["settings"][0]["reason"].as_str().unwrap_or_default();
    assert_ne!(code, 0);
    assert!(
        reason.contains("answered GET / with HTTP 404") && reason.contains("asks for 200"),
        "{reason}"
    );
    assert!(
        !reason.contains("raise"),
        "never a timeout hint when it replied: {reason}"
    );
    // Said when it answered, not at the 20 s timeout.
    let after_ms: u64 = reason
        .split(") after ")
        .nth(1)
        .and_then(|r| r.split(" ms").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no `after N ms` in {reason}"));
    assert!(after_ms < 20_000, "{reason}");
    // The twin: the same profile, polling a route that answers 200, runs.
    let (code, j, stderr) = sweep(
        &[
            &[
                "--path",
                "/wait?ms=5",
                "--ready-path",
                "/wait?ms=1",
                "--server",
                server,
            ][..],
            &SHORT,
        ]
        .concat(),
    );
    assert_eq!(
        (code, j["settings"][0]["status"].as_str()),
        (0, Some("clean")),
        "{stderr}"
    );
}

#[test]
fn per_thread_state_is_warmed_up_on_every_thread_not_read_as_errors() {
    // Each thread builds its own SQLite table on its first request.
    let (code, j, stderr) = sweep(&[
        "--path",
        "/db?rows=50000",
        "--threads",
        "2",
        "--duration",
        "500ms",
        "--warmup",
        "0s",
    ]);
    let s = &j["settings"][0];
    assert_eq!((code, s["status"].as_str()), (0, Some("clean")), "{stderr}");
    let w = &s["warmup"];
    assert!(w["requests"].as_u64().unwrap() > 0, "{w}");
    assert!(w["threads_reached"].as_u64().unwrap() >= 2, "{w}");
    assert_eq!(w["threads_wanted"], 2, "{w}");
    assert!(stderr.contains("threads reached"), "{stderr}");
    // The twin: a view that fails (rows=0 answers 400) is still ERRORS,
    // named as the warm-up's, and the warm-up stops early instead of
    // loading a broken view until its cap.
    // Read from the report's own warm-up figures, not the wall clock
    // around the command (which includes the server's start on a shared
    // runner): stopped early means not complete, and well before the cap.
    let (code, j, _) = sweep(&[
        "--path",
        "/db?rows=0",
        "--threads",
        "2",
        "--duration",
        "300ms",
        "--warmup",
        "0s",
    ]);
    let s = &j["settings"][0];
    let w = &s["warmup"];
    let cap_s = runner::sweep::WARMUP_CAP.as_secs_f64();
    assert_eq!(w["complete"], false, "{w}");
    assert!(
        w["elapsed_s"].as_f64().unwrap() < cap_s / 2.0,
        "the warm-up ran to its cap ({cap_s} s): {w}"
    );
    assert!(w["errors"]["counts"]["status"].as_u64().unwrap() > 0, "{w}");
    assert_ne!(code, 0);
    assert_eq!(s["status"], "errors", "{s}");
    assert!(
        s["reason"].as_str().unwrap().contains("during the warm-up"),
        "{s}"
    );
}

#[test]
fn a_view_slower_than_the_window_is_slow_not_errors() {
    let (code, j, _) = sweep(&[&["--path", "/wait?ms=1500"][..], &SHORT].concat());
    let s = &j["settings"][0];
    assert_ne!(code, 0);
    assert_eq!(s["status"], "slow", "{s}");
    let reason = s["reason"].as_str().unwrap();
    assert!(
        reason.contains("slow, not failing") && reason.contains("--duration"),
        "{reason}"
    );
    assert!(!reason.contains("ERRORS"), "{reason}");
    // The twin: the same view within the window is clean.
    let (code, j, _) = sweep(&[&["--path", "/wait?ms=20"][..], &SHORT].concat());
    assert_eq!(
        (code, j["settings"][0]["status"].as_str()),
        (0, Some("clean"))
    );
}

/// `runner advise ARGS --json` on libapp.
fn advise(args: &[&str]) -> (i32, Value, String) {
    let mut cmd = runner();
    cmd.arg("advise")
        .args(["--app", "app:app", "--app-dir"])
        .arg(libapp());
    let r = common::json_run(cmd.args(args).arg("--json").output().unwrap());
    (r.code, r.report, r.stderr)
}

#[test]
fn advise_on_a_user_view_that_waits_gives_the_pool_and_a_deaf_server_no_advice() {
    let (code, j, stderr) = advise(&["--path", "/wait?ms=30"]);
    // A busy machine may leave it unable to tell (exit 2, a reason): never
    // a wrong advice. What must not happen is a readiness or warm-up stop.
    let reason = j["reason"].as_str().unwrap_or_default().to_string();
    assert!(
        !reason.contains("not ready") && !reason.contains("ERRORS"),
        "{reason}\n{stderr}"
    );
    if code == 0 {
        assert_eq!(j["advice"]["kind"], "pool", "{j}");
        let points = j["question2"]["figures"]["points"].as_array().unwrap();
        assert!(
            points.iter().all(|p| p["warmup_s"].as_f64().is_some()),
            "{j}"
        );
    } else {
        assert_eq!(code, 2, "{j}");
        assert!(j["advice"].is_null());
    }
    // The twin: a server that never answers gives no advice, with the
    // ready timeout's reason.
    let dir = tempfile::tempdir().unwrap();
    let deaf = deaf_profile(dir.path());
    let (code, j, _) = advise(&["--path", "/wait?ms=30", "--server", deaf.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(j["advice"].is_null());
    let reason = j["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("not ready within 1500 ms"), "{reason}");
}
