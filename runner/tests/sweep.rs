//! `runner sweep` end to end: the real binary, real servers, real HTTP on
//! loopback, with short loads (0.2 s of warm-up and 0.7 s measured per
//! setting: under four seconds of load per test).
//!
//! - The fault server with no fault (bareapp's routes): every output has one
//!   row per setting with req/s > 0 and its digests counted; its twin, the
//!   fault server answering wrong digests, shows them and is not clean.
//! - granian: the same figures, with the server's CPU from its process group.
//! - A user's own app, written to a temp folder outside the repo: swept with
//!   "work not verified"; its twin, a route of it that fails, is not clean.

mod common;

use std::path::{Path, PathBuf};

use common::{root, runner};
use serde_json::Value;

const LOAD: [&str; 4] = ["--duration", "700ms", "--warmup", "200ms"];

/// A profile in `dir` starting the fault server with `--fault fault`.
fn fault_profile(dir: &Path, fault: &str) -> PathBuf {
    let script = root().join("fixtures/faultserver/faultserver.py");
    let profile = serde_json::json!({
        "name": format!("sweep-fault-{fault}"),
        "argv": ["{python}", script.display().to_string(), "--host", "{host}", "--port", "{port}",
                 "--app-dir", "{app_dir}", "--fault", fault, "{knobs}"],
        "knobs": { "threads": ["--threads", "{threads}"] },
        "ready": { "path": "/", "timeout_ms": 20000 },
        "env": { "PYTHONUNBUFFERED": "1" },
        "stop_grace_ms": 1000,
    });
    let path = dir.join(format!("fault-{fault}.yaml"));
    // JSON is YAML: the profile loader reads it as is.
    std::fs::write(&path, profile.to_string()).unwrap();
    path
}

/// One finished sweep: exit code, stdout (the table), stderr and every file.
struct Sweep {
    code: i32,
    table: String,
    stderr: String,
    json: Value,
    csv: String,
    markdown: String,
    svg: String,
}

fn sweep(args: &[&str]) -> Sweep {
    let out_dir = tempfile::tempdir().unwrap();
    let file = |name: &str| out_dir.path().join(name);
    let out = runner()
        .arg("sweep")
        .args(args)
        .args(LOAD)
        .arg("--json-file")
        .arg(file("s.json"))
        .arg("--csv")
        .arg(file("s.csv"))
        .arg("--markdown")
        .arg(file("s.md"))
        .output()
        .unwrap();
    let read = |name: &str| std::fs::read_to_string(file(name)).unwrap_or_default();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_str(&read("s.json"))
        .unwrap_or_else(|e| panic!("no JSON report ({e}); stderr:\n{stderr}"));
    Sweep {
        code: out.status.code().unwrap_or(-1),
        table: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr,
        json,
        csv: read("s.csv"),
        // --svg defaults to next to --markdown.
        markdown: read("s.md"),
        svg: read("s.svg"),
    }
}

impl Sweep {
    fn settings(&self) -> &Vec<Value> {
        self.json["settings"].as_array().unwrap()
    }

    fn context(&self) -> String {
        format!("table:\n{}\nstderr:\n{}", self.table, self.stderr)
    }

    /// Every output has exactly the rows `expected` (setting names), each
    /// with req/s > 0.
    fn assert_rows(&self, expected: &[&str]) {
        let ctx = self.context();
        let settings = self.settings();
        assert_eq!(settings.len(), expected.len(), "{ctx}");
        for (s, name) in settings.iter().zip(expected) {
            assert!(
                s["load"]["requests_per_s"].as_f64().unwrap() > 0.0,
                "{name}: no req/s\n{ctx}"
            );
            let p99 = s["load"]["latency"]["p99_ms"].as_f64().unwrap();
            assert!(p99 > 0.0 && p99 < 30_000.0, "{name}: p99 {p99}");
            let row = self
                .table
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{name} ")))
                .unwrap_or_else(|| panic!("no table row {name:?}\n{ctx}"));
            let rps: f64 = row
                .split_whitespace()
                .nth(name.split(' ').count())
                .unwrap()
                .parse()
                .unwrap();
            assert!(rps > 0.0, "{row}");
            assert!(
                self.markdown
                    .lines()
                    .any(|l| l.starts_with(&format!("| {name} |"))),
                "markdown has no row {name}:\n{}",
                self.markdown
            );
        }
        let mut csv = csv::Reader::from_reader(self.csv.as_bytes());
        let headers = csv.headers().unwrap().clone();
        let col = |h: &str| headers.iter().position(|x| x == h).unwrap();
        let records: Vec<csv::StringRecord> = csv.records().map(Result::unwrap).collect();
        assert_eq!(records.len(), expected.len(), "csv:\n{}", self.csv);
        for (r, name) in records.iter().zip(expected) {
            assert_eq!(&r[col("setting")], *name);
            assert!(r[col("req_per_s")].parse::<f64>().unwrap() > 0.0, "{r:?}");
        }
        // The plot is linked from the Markdown and draws each route.
        assert!(self.markdown.contains("](s.svg)"), "{}", self.markdown);
        assert!(self.svg.starts_with("<svg"), "svg: {:.200}", self.svg);
        assert!(self.svg.contains("req/s") && self.svg.contains("p99 ms"));
    }
}

#[test]
fn fault_server_sweep_has_a_row_per_setting_and_counts_every_digest() {
    let dir = tempfile::tempdir().unwrap();
    let profile = fault_profile(dir.path(), "none");
    let s = sweep(&[
        "--server",
        profile.to_str().unwrap(),
        "--threads",
        "1,2",
        "--path",
        "/work?mode=release&kib=64",
        "--path",
        "/",
    ]);
    let ctx = s.context();
    assert_eq!(s.code, 0, "{ctx}");
    s.assert_rows(&[
        "threads=1 releasing",
        "threads=1 /",
        "threads=2 releasing",
        "threads=2 /",
    ]);
    for (i, st) in s.settings().iter().enumerate() {
        assert_eq!(st["status"], "clean", "{ctx}");
        let load = &st["load"];
        let work = i % 2 == 0;
        assert_eq!(load["work_verified"], work);
        if work {
            // Every good reply of /work had its digest compared.
            assert_eq!(load["digests_checked"], load["requests"], "{ctx}");
            assert!(load["requests"].as_u64().unwrap() > 0);
        } else {
            assert_eq!(load["digests_checked"], 0);
        }
        assert_eq!(load["errors"]["counts"], serde_json::json!({}));
    }
    assert!(
        s.table.contains("digest ") && s.table.contains(" ok"),
        "{ctx}"
    );
    assert!(s.table.contains("CLEAN: 4 setting(s)"), "{ctx}");
    assert!(s.csv.contains(",digest "), "{}", s.csv);
    assert!(s.markdown.contains("| digest "), "{}", s.markdown);
    // The first setting of each route is its own baseline.
    assert_eq!(s.settings()[0]["scaling"], 1.0);
    assert_eq!(s.settings()[1]["scaling"], 1.0);
}

#[test]
fn wrong_digests_are_counted_and_never_clean() {
    let dir = tempfile::tempdir().unwrap();
    let profile = fault_profile(dir.path(), "wrong-digest");
    let s = sweep(&[
        "--server",
        profile.to_str().unwrap(),
        "--threads",
        "1",
        "--path",
        "/work?mode=release&kib=64",
    ]);
    let ctx = s.context();
    assert_eq!(s.code, 2, "wrong work must not exit 0\n{ctx}");
    let st = &s.settings()[0];
    assert_eq!(st["status"], "errors", "{ctx}");
    let wrong = st["load"]["errors"]["counts"]["digest"]
        .as_u64()
        .unwrap_or(0);
    assert!(wrong > 0, "{ctx}");
    assert_eq!(st["load"]["digests_checked"].as_u64(), Some(wrong));
    // A wrong reply is not work done.
    assert_eq!(st["load"]["requests"], 0);
    assert!(
        st["load"]["errors"]["samples"]["digest"]
            .as_str()
            .unwrap()
            .contains("did not do the work"),
        "{ctx}"
    );
    assert!(
        s.table
            .contains(&format!("digest {wrong} WRONG of {wrong}")),
        "{ctx}"
    );
    assert!(s.table.contains("NOT CLEAN"), "{ctx}");
    assert!(!s.table.lines().any(|l| l.starts_with("CLEAN")), "{ctx}");
    assert!(
        s.csv.contains(&format!(",{wrong},digest {wrong} WRONG")),
        "{}",
        s.csv
    );
    assert!(s.markdown.contains("WRONG"), "{}", s.markdown);
}

#[test]
fn granian_sweep_reads_the_servers_cpu() {
    let s = sweep(&[
        "--threads",
        "1,2",
        "--path",
        "/work?mode=release&kib=1024",
        "--path",
        "/work?mode=hold&kib=1024",
    ]);
    let ctx = s.context();
    assert_eq!(s.code, 0, "{ctx}");
    s.assert_rows(&[
        "threads=1 releasing",
        "threads=1 holding",
        "threads=2 releasing",
        "threads=2 holding",
    ]);
    for st in s.settings() {
        assert_eq!(
            st["load"]["digests_checked"], st["load"]["requests"],
            "{ctx}"
        );
        match st["cpu"]["cpu_pct"].as_f64() {
            // Hashing a MiB per request keeps the server busy: well above idle.
            Some(cpu) => assert!(cpu > 10.0, "cpu {cpu}%\n{ctx}"),
            None => assert!(st["cpu_note"].is_string(), "no CPU and no reason\n{ctx}"),
        }
        match st["pss"]["peak_kib"].as_u64() {
            // A Python interpreter with granian loaded: megabytes, not bytes.
            Some(kib) => assert!(kib > 4096, "pss {kib} KiB\n{ctx}"),
            None => assert!(st["pss_note"].is_string(), "no PSS and no reason\n{ctx}"),
        }
        assert!(st["server"]["argv"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "--blocking-threads"));
    }
    // Both routes are lines of the one plot.
    assert!(s.svg.contains("releasing") && s.svg.contains("holding"));
    assert!(
        s.table.contains("pss MiB") && s.csv.contains("pss_mib"),
        "{ctx}"
    );
}

/// A user's own WSGI app in a temp folder outside the repo.
fn user_app() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    assert!(!dir.path().starts_with(root()));
    std::fs::write(
        dir.path().join("mymod.py"),
        r#"
def app(environ, start_response):
    path = environ.get("PATH_INFO", "/")
    if path == "/hello":
        body, status = b"hello from my own app", "200 OK"
    elif path == "/boom":
        body, status = b"it broke", "500 Internal Server Error"
    elif path == "/raise":
        raise ValueError("raised by mymod.app")
    elif path == "/huge":
        body, status = b"x" * (17 * 1024 * 1024), "200 OK"
    else:
        body, status = b"ready", "200 OK"
    start_response(status, [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
"#,
    )
    .unwrap();
    dir
}

#[test]
fn a_user_app_sweeps_with_work_not_verified() {
    let app = user_app();
    let app_dir = app.path().to_str().unwrap();
    let base = ["--app", "mymod:app", "--app-dir", app_dir, "--threads", "1"];
    let s = sweep(&[&base[..], &["--path", "/hello", "--env", "MY_SETTING=1"]].concat());
    let ctx = s.context();
    assert_eq!(s.code, 0, "{ctx}");
    // The app's settings are said where the figures are.
    assert!(s.table.contains("with MY_SETTING=1"), "{ctx}");
    assert_eq!(s.json["env"]["MY_SETTING"], "1", "{ctx}");
    s.assert_rows(&["threads=1 /hello"]);
    let load = &s.settings()[0]["load"];
    assert_eq!(load["work_verified"], false);
    assert_eq!(load["digests_checked"], 0);
    assert_eq!(load["body_bytes"], serde_json::json!([21, 21]));
    assert!(s.table.contains("work not verified"), "{ctx}");
    assert!(s.csv.contains("work not verified"));
    assert!(s.json["app"] == "mymod:app", "{}", s.json["app"]);

    // The twin: the same check failing on a route of the same app.
    let s = sweep(&[&base[..], &["--path", "/boom"]].concat());
    let ctx = s.context();
    assert_eq!(s.code, 2, "{ctx}");
    let st = &s.settings()[0];
    assert_eq!(st["status"], "errors");
    assert!(
        st["load"]["errors"]["counts"]["status"].as_u64().unwrap() > 0,
        "{ctx}"
    );
    assert!(
        st["load"]["errors"]["samples"]["status"]
            .as_str()
            .unwrap()
            .starts_with("HTTP 500"),
        "{ctx}"
    );
    assert!(s.table.contains("NOT CLEAN"), "{ctx}");

    // A view that raises: the reason ends with the server log's last
    // lines, the traceback (a bare "HTTP 500" told the user nothing).
    let s = sweep(&[&base[..], &["--path", "/raise"]].concat());
    let ctx = s.context();
    assert_eq!(s.code, 2, "{ctx}");
    let reason = s.settings()[0]["reason"].as_str().unwrap().to_string();
    assert!(reason.contains("the server's log"), "{ctx}");
    assert!(reason.contains("ValueError: raised by mymod.app"), "{ctx}");
    assert!(s.table.contains("ValueError: raised by mymod.app"), "{ctx}");

    // A body past the client's 16 MiB cap is a transport error, not memory
    // (in the window, or already in the warm-up, which stops a route that
    // fails more than it serves).
    let s = sweep(&[&base[..], &["--path", "/huge", "--connections", "2"]].concat());
    let ctx = s.context();
    assert_eq!(s.code, 2, "{ctx}");
    let load = &s.settings()[0]["load"];
    let errors = if load["errors"]["counts"]["transport"].is_u64() {
        &load["errors"]
    } else {
        &load["warmup_errors"]
    };
    assert!(errors["counts"]["transport"].as_u64().unwrap() > 0, "{ctx}");
    assert!(
        errors["samples"]["transport"]
            .as_str()
            .unwrap()
            .contains("the body is over the runner's 16777216-byte cap"),
        "{ctx}"
    );
    // The twin of the traceback: errors that are not the server's 5xx
    // leave its log out of the reason.
    let reason = s.settings()[0]["reason"].as_str().unwrap();
    assert!(!reason.contains("the server's log"), "{ctx}");
}

#[test]
fn bad_flags_name_the_flag_and_start_nothing() {
    for (args, says) in [
        (vec!["--threads", "0"], "--threads 0"),
        (vec!["--duration", "5"], "--duration 5"),
        (vec!["--path", "/work?mode=release"], "--path"),
        (
            vec!["--path", "/work?mode=release&kib=8&seed=1"],
            "leave `seed` out",
        ),
        (vec!["--app", "mymod:app"], "--app-dir"),
        (vec!["--app", "nope", "--app-dir", "/tmp"], "MODULE:ATTR"),
        (vec!["--connections", "0"], "--connections 0"),
        (vec!["--env", "OPENBLAS_NUM_THREADS"], "give NAME=VALUE"),
        (vec!["--env", "9X=1"], "--env \"9X\""),
        (vec!["--ready-timeout-ms", "5"], "--ready-timeout-ms 5"),
    ] {
        let out = runner().arg("sweep").args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!stderr.contains("starting the server"), "{stderr}");
    }
}

/// A tiny keep-alive HTTP server on 127.0.0.1 that answers every request
/// with `reply`; it lives as long as the test process.
fn serve_forever(reply: &'static str) -> std::net::SocketAddr {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(n) = stream.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    seen.extend_from_slice(&buf[..n]);
                    // One reply per request head read.
                    while let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                        seen.drain(..end + 4);
                        if stream.write_all(reply.as_bytes()).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    addr
}

/// `runner load --json` of `/` on `addr` for half a second.
fn load_json(addr: std::net::SocketAddr) -> (Option<i32>, Value) {
    let out = runner()
        .args(["load", "--json", "--path", "/", "--no-digest"])
        .args(["--connections", "2", "--duration", "500ms", "--addr"])
        .arg(addr.to_string())
        .output()
        .unwrap();
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), doc)
}

#[test]
fn load_counts_a_signed_content_length_as_an_error_on_every_reply() {
    // hyper refuses `Content-Length: +5` (RFC 9110 allows digits only);
    // the load's own parser must too, or the two clients disagree.
    let (code, doc) = load_json(serve_forever(
        "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello",
    ));
    assert_eq!(code, Some(2), "{doc}");
    assert_eq!(doc["requests"], 0, "{doc}");
    let transport = doc["errors"]["counts"]["transport"].as_u64().unwrap_or(0);
    assert!(transport > 0, "{doc}");
    assert!(
        doc["errors"]["samples"]["transport"]
            .to_string()
            .contains("Content-Length that is not a number"),
        "{doc}"
    );
    // The twin: the same server with a valid length is read, every reply good.
    let (code, doc) = load_json(serve_forever(
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
    ));
    assert_eq!(code, Some(0), "{doc}");
    assert!(doc["requests"].as_u64().unwrap() > 0, "{doc}");
    assert!(
        doc["errors"]["counts"].as_object().unwrap().is_empty(),
        "{doc}"
    );
}

#[test]
fn load_refuses_non_loopback_and_counts_a_dead_server_as_errors() {
    let out = runner()
        .args(["load", "--addr", "10.0.0.1:80", "--path", "/"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("only loopback"));

    // Nothing listens on a port we just released: every attempt is a
    // connect error, counted, and the load still ends on time.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let started = std::time::Instant::now();
    let out = runner()
        .args([
            "load",
            "--json",
            "--path",
            "/",
            "--duration",
            "500ms",
            "--addr",
        ])
        .arg(format!("127.0.0.1:{port}"))
        .output()
        .unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(2));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["requests"], 0);
    assert!(
        doc["errors"]["counts"]["connect"].as_u64().unwrap() > 0,
        "{doc}"
    );
    assert!(doc["latency"].is_null());
}

#[test]
fn a_server_that_will_not_start_or_cannot_set_threads_is_not_measured() {
    let dir = tempfile::tempdir().unwrap();
    let profile = fault_profile(dir.path(), "exit-at-start");
    let s = sweep(&[
        "--server",
        profile.to_str().unwrap(),
        "--threads",
        "1",
        "--path",
        "/",
    ]);
    let ctx = s.context();
    assert_eq!(s.code, 2, "{ctx}");
    let st = &s.settings()[0];
    assert_eq!(st["status"], "failed", "{ctx}");
    assert!(st["load"].is_null());
    assert!(
        st["reason"]
            .as_str()
            .unwrap()
            .contains("server would not start"),
        "{ctx}"
    );
    assert!(s.table.contains("not measured"), "{ctx}");

    // A profile with no `knobs.threads` cannot run a --threads setting.
    let text = std::fs::read_to_string(fault_profile(dir.path(), "none")).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["knobs"] = serde_json::json!({});
    let bare = dir.path().join("no-knobs.yaml");
    std::fs::write(&bare, doc.to_string()).unwrap();
    let s = sweep(&[
        "--server",
        bare.to_str().unwrap(),
        "--threads",
        "2",
        "--path",
        "/",
    ]);
    let ctx = s.context();
    assert_eq!(s.code, 2, "{ctx}");
    assert_eq!(s.settings()[0]["status"], "not-applicable", "{ctx}");
    assert!(s.table.contains("cannot express `threads`"), "{ctx}");
}

/// A sweep row in a temp folder (named as its id), on the fault server.
fn sweep_row(dir: &Path, threads: &str) -> PathBuf {
    let profile = fault_profile(dir, "none");
    let row = format!(
        "id: my-sweep\ntitle: Threads on the fault server\nclaim: more threads, more req/s\nsweep:\n  server: {}\n  paths: ['/work?mode=release&kib=64']\n  threads: {threads}\n  duration: 700ms\n  warmup: 200ms\n",
        profile.display()
    );
    let path = dir.join("my-sweep.yaml");
    std::fs::write(&path, row).unwrap();
    path
}

#[test]
fn a_sweep_row_runs_as_its_flags_would() {
    let dir = tempfile::tempdir().unwrap();
    let row = sweep_row(dir.path(), "[1, 2]");
    let (json, md) = (dir.path().join("r.json"), dir.path().join("r.md"));
    let out = runner()
        .arg("sweep")
        .arg(&row)
        .arg("--json-file")
        .arg(&json)
        .arg("--markdown")
        .arg(&md)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let j: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(j["row"]["id"], "my-sweep", "{j}");
    let threads: Vec<u64> = j["settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["setting"]["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(threads, [1, 2]);
    assert!(
        j["settings"][0]["load"]["digests_checked"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(
        (j["duration_s"].as_f64().unwrap() - 0.7).abs() < 1e-9,
        "{j}"
    );
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        md.starts_with("## my-sweep: Threads on the fault server"),
        "{md}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("my-sweep: "));
}

#[test]
fn a_bad_sweep_row_names_its_line_and_key_and_starts_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let row = sweep_row(dir.path(), "[1, 0]");
    let json = dir.path().join("r.json");
    let out = runner()
        .arg("sweep")
        .arg(&row)
        .arg("--json-file")
        .arg(&json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("my-sweep.yaml:7:"), "{stderr}");
    assert!(
        stderr.contains("`sweep.threads`: 0: use 1 to 256"),
        "{stderr}"
    );
    assert!(!json.exists());
    // A row with route flags beside it: clap refuses, naming both.
    let out = runner()
        .args(["sweep", "blocking-threads", "--threads", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
}
