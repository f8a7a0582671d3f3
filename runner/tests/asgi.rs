//! ASGI end to end: the ASGI rows on every ASGI profile, each with a twin
//! that must fail; the app's interface found by importing it, and a
//! mismatch refused before any server starts; advise's two ASGI kinds.

mod common;

use std::time::{Duration, Instant};

use common::{edited, gate_json, json_run, root, runner};

const ASGI_PROFILES: [&str; 3] = ["uvicorn", "hypercorn", "granian-asgi"];

#[test]
fn the_asgi_servers_are_ready_and_speak_asgi() {
    let out = runner()
        .arg("servers")
        .args(ASGI_PROFILES)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    for name in ASGI_PROFILES {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} not listed:\n{stdout}"));
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cols[1], "yes", "{line}");
        assert!(cols.contains(&"asgi"), "{line}");
    }
    // The twin: a WSGI server says wsgi.
    let out = runner().args(["servers", "granian"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("granian ") && l.contains(" wsgi ")),
        "{stdout}"
    );
}

/// Every ASGI row, in one gate: E19 on the threadpool (the bare fixture
/// and FastAPI), the event-loop claim, and E15 across spawned workers.
const ASGI_ROWS: [&str; 4] = ["E19-asgi", "E19-fastapi", "ASGI-loop", "E15-asgi"];

/// `rows` in one gate on `server`, each with `verdict` on that server.
fn gate_each(rows: &[&str], server: &str, verdict: &str) -> common::JsonRun {
    let mut args = rows.to_vec();
    args.extend(["--server", server]);
    let run = gate_json(&args);
    let results = run.report["results"].as_array().unwrap();
    assert_eq!(results.len(), rows.len(), "{}", run.report);
    for r in results {
        let id = &r["row"]["id"];
        assert_eq!(r["verdict"], verdict, "{server} {id}: {}", r["reason"]);
        assert_eq!(r["profile"], server);
    }
    run
}

fn rows_pass_on(server: &str) {
    let run = gate_each(&ASGI_ROWS, server, "pass");
    let results = run.report["results"].as_array().unwrap();
    assert_eq!(run.code, 0);
    for e19 in &results[..2] {
        common::JsonRun::assert_pair_figures(&e19["figures"], true);
    }
    let e15 = &results[3]["figures"];
    assert_eq!(e15["workers"].as_array().unwrap().len(), 2, "{e15}");
    common::JsonRun::assert_pair_figures(&e15["pair_ratio"], true);
    run.assert_no_survivors();
}

/// The copy of `row` that must fail on every server, and the edit that
/// makes it so.
const TWINS: [(&str, &str, &str); 4] = [
    // A threadpool of one: the releasing def view waits for the pool, so
    // the pair serialises. This is also the proof the threads knob (anyio's
    // limiter, set by the wrapper) reaches the app on this server.
    ("E19-asgi", "server:\n  threads: 2", "server:\n  threads: 1"),
    // The same on FastAPI's def endpoint.
    ("E19-fastapi", "server:\n  threads: 2", "server:\n  threads: 1"),
    // The mode under test blocks the loop instead of awaiting.
    (
        "ASGI-loop",
        "          ASGIAPP_SLOW: await",
        "          ASGIAPP_SLOW: loop\n          ASGIAPP_TWIN: \"1\"",
    ),
    // The mode under test runs on one worker with one thread: the pair
    // takes turns in one process, and must fail, though the census (on the
    // row's two workers) passes. (The control's one worker with two
    // threads would be the same measurement twice, which the row refuses.)
    (
        "E15-asgi",
        "        role: under-test\n        path: /work?mode=hold\n",
        "        role: under-test\n        path: /work?mode=hold\n        server:\n          workers: 1\n          threads: 1\n",
    ),
];

fn twins_fail_on(server: &str) {
    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<_> = TWINS
        .iter()
        .map(|(row, from, to)| edited(row, dir.path(), &format!("{row}-twin.yaml"), &[(from, to)]))
        .collect();
    let rows: Vec<&str> = rows.iter().map(|p| p.to_str().unwrap()).collect();
    let run = gate_each(&rows, server, "fail");
    let results = run.report["results"].as_array().unwrap();
    // E15's fail is the pair's own: it read serialised, whatever the
    // census saw (on uvicorn, twelve fresh connections one after another
    // may all be accepted by one worker; the row's census then fails too).
    common::JsonRun::assert_pair_figures(&results[3]["figures"]["pair_ratio"], false);
    assert_eq!(run.code, 1);
    run.assert_no_survivors();
}

#[test]
fn asgi_rows_pass_on_uvicorn() {
    rows_pass_on("uvicorn");
}

#[test]
fn asgi_rows_pass_on_hypercorn() {
    rows_pass_on("hypercorn");
}

#[test]
fn asgi_rows_pass_on_granian_asgi() {
    rows_pass_on("granian-asgi");
}

#[test]
fn asgi_twins_fail_on_uvicorn() {
    twins_fail_on("uvicorn");
}

#[test]
fn asgi_twins_fail_on_hypercorn() {
    twins_fail_on("hypercorn");
}

#[test]
fn asgi_twins_fail_on_granian_asgi() {
    twins_fail_on("granian-asgi");
}

#[test]
fn an_asgi_row_needs_no_server_flag_and_a_wsgi_server_is_refused() {
    // No --server: the row's app is found to be ASGI and served on uvicorn.
    let run = gate_json(&["ASGI-loop"]);
    assert_eq!(run.verdict(), "pass", "{}", run.reason());
    assert_eq!(run.result()["profile"], "uvicorn");
    // The twin: a WSGI server asked for by name is refused before anything
    // starts, naming the ASGI profiles.
    let started = Instant::now();
    let out = runner()
        .args(["gate", "ASGI-loop", "--server", "granian"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is an ASGI app"), "{stderr}");
    assert!(stderr.contains("--server uvicorn"), "{stderr}");
    assert!(!stderr.contains("server ready"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[test]
fn the_interface_is_found_and_a_mismatch_refused_before_anything_starts() {
    // A WSGI app on an ASGI-only profile: exit 2, no server started.
    let libapp = root().join("fixtures/libapp");
    let out = runner()
        .args(["sweep", "--app", "app:app", "--app-dir"])
        .arg(&libapp)
        .args(["--server", "uvicorn", "--path", "/x", "--threads", "1"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is a WSGI app"), "{stderr}");
    assert!(stderr.contains("uvicorn speaks ASGI only"), "{stderr}");
    assert!(stderr.contains("--server granian"), "{stderr}");
    assert!(!stderr.contains("starting the server"), "{stderr}");
    // The twin: the ASGI fixture with no --server is found ASGI and served
    // on uvicorn, and answers.
    let asgiapp = root().join("fixtures/asgiapp");
    let sweep = |extra: &[&str]| {
        runner()
            .args(["sweep", "--app", "app:app", "--app-dir"])
            .arg(&asgiapp)
            .args([
                "--path",
                "/pid",
                "--threads",
                "1",
                "--duration",
                "300ms",
                "--warmup",
                "100ms",
                "--json",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = sweep(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["server"], "uvicorn", "{stderr}");
    assert!(stderr.contains("ASGI"), "{stderr}");
    // --interface overrides the import: told WSGI, it is served on granian
    // as WSGI, and every request fails (the sweep says so, exit 2).
    let out = sweep(&["--interface", "wsgi"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["server"], "granian");
    assert_eq!(out.status.code(), Some(2));
}

fn advise(path: &str) -> common::JsonRun {
    let asgiapp = root().join("fixtures/asgiapp");
    let out = runner()
        .args(["advise", "--app", "app:app", "--app-dir"])
        .arg(&asgiapp)
        .args(["--path", path, "--json"])
        .output()
        .unwrap();
    json_run(out)
}

#[test]
fn advise_says_loop_for_an_awaiting_view_and_to_thread_for_a_blocking_one() {
    let awaits = advise("/slow?ms=100");
    assert_eq!(awaits.code, 0, "{}", awaits.stderr);
    assert_eq!(awaits.report["advice"]["kind"], "loop", "{}", awaits.report);
    assert_eq!(awaits.report["server"], "uvicorn");
    assert_eq!(awaits.report["placement"]["place"], "loop-awaits");
    // The twin: the same wait, blocking the loop (time.sleep in an async
    // view), must not read as loop: to-thread, and moved to a thread it
    // waits.
    let blocks = advise("/slow?ms=100&on=loop");
    assert_eq!(blocks.code, 0, "{}", blocks.stderr);
    assert_eq!(
        blocks.report["advice"]["kind"], "to-thread",
        "{}",
        blocks.report
    );
    assert_eq!(
        blocks.report["advice"]["then"], "waits",
        "{}",
        blocks.report
    );
    assert_eq!(blocks.report["placement"]["place"], "loop-blocks");
}
