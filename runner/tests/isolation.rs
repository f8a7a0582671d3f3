//! No shell, loopback only (issue 6, section 6): every process is spawned
//! from an argv list; row and profile values reach the server verbatim,
//! never through a shell; servers bind 127.0.0.1 unless `--host` names
//! another loopback address; a server listening beyond loopback is stopped.
//!
//! The servers here are fixtures/faultserver with no fault: a real HTTP/1.1
//! process that echoes its argv and environment to its log.

mod common;

use std::path::{Path, PathBuf};

use common::{edited_row, gate_json, root, runner};
use predicates::str::contains;

/// A faultserver profile in `dir` whose argv is `head` + the usual tail,
/// with `{host}` replaced by `host_arg`.
fn profile(dir: &Path, name: &str, host_arg: &str, extra: &[&str]) -> PathBuf {
    let script = root().join("fixtures/faultserver/faultserver.py");
    let mut argv: Vec<String> = vec![
        "{python}".into(),
        script.display().to_string(),
        "--host".into(),
        host_arg.into(),
        "--port".into(),
        "{port}".into(),
        "--app-dir".into(),
        "{app_dir}".into(),
        "--pidfile".into(),
        dir.join("pids").display().to_string(),
    ];
    argv.extend(extra.iter().map(|s| s.to_string()));
    argv.push("{knobs}".into());
    let p = serde_json::json!({
        "name": name,
        "argv": argv,
        "knobs": { "threads": ["--threads", "{threads}"] },
        "ready": { "path": "/", "timeout_ms": 5000 },
        "env": { "PYTHONUNBUFFERED": "1" },
        "stop_grace_ms": 1000,
    });
    let file = dir.join(format!("{name}.yaml"));
    std::fs::write(&file, p.to_string()).unwrap();
    file
}

fn log_of(run: &common::JsonRun) -> String {
    let log = run.result()["servers"][0]["log"].as_str().unwrap();
    std::fs::read_to_string(log).unwrap()
}

#[test]
fn host_flag_refuses_anything_but_loopback() {
    for bad in ["0.0.0.0", "::", "10.1.2.3", "192.168.0.1", "localhost"] {
        runner()
            .args(["--host", bad, "gate", "E19"])
            .assert()
            .code(2)
            .stderr(contains(format!("--host {bad}:")));
    }
}

#[test]
fn servers_bind_the_host_the_runner_gives_them() {
    // Default 127.0.0.1, and 127.0.0.2 / ::1 through --host (the twin of the
    // refusals above: the same flag with a loopback value gets through).
    let dir = tempfile::tempdir().unwrap();
    let p = profile(dir.path(), "iso-host", "{host}", &[]);
    let ipv6 = std::net::TcpListener::bind("[::1]:0").is_ok();
    let mut hosts = vec![None, Some("127.0.0.2")];
    if ipv6 {
        hosts.push(Some("::1"));
    } else {
        eprintln!("no IPv6 loopback here: ::1 not checked");
    }
    for host in hosts {
        let mut args = vec!["E19", "--trials", "1", "--server", p.to_str().unwrap()];
        if let Some(h) = host {
            args.extend(["--host", h]);
        }
        let run = gate_json(&args);
        let r = run.result();
        assert!(
            !r["figures"].is_null(),
            "{host:?}: not measured: {}",
            r["reason"]
        );
        let want = host.unwrap_or("127.0.0.1");
        let argv: Vec<&str> = r["servers"][0]["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert!(argv.windows(2).any(|w| w == ["--host", want]), "{argv:?}");
        assert!(
            log_of(&run).contains(&format!("serving on {want}:")),
            "{}",
            log_of(&run)
        );
        run.assert_no_survivors();
    }
}

#[test]
fn a_server_listening_beyond_loopback_is_stopped() {
    // The profile ignores {host} and binds every interface. (No traffic
    // goes to it but the runner's own readiness probe on 127.0.0.1.)
    let dir = tempfile::tempdir().unwrap();
    let p = profile(dir.path(), "iso-everywhere", "0.0.0.0", &[]);
    let run = gate_json(&["E19", "--trials", "1", "--server", p.to_str().unwrap()]);
    assert_eq!(run.verdict(), "cannot-judge");
    assert_eq!(run.code, 2);
    let reason = run.result()["reason"].as_str().unwrap();
    assert!(reason.contains("beyond loopback"), "{reason}");
    assert!(reason.contains("0.0.0.0:"), "{reason}");
    // The server was stopped: the recorded leader is gone.
    let pids = std::fs::read_to_string(dir.path().join("pids")).unwrap();
    for line in pids.lines() {
        let pgid: i32 = line.split_whitespace().nth(2).unwrap().parse().unwrap();
        assert!(!runner::host::process::group_alive(pgid), "{line} survived");
    }
}

/// Shell syntax that would create `mark` if any shell ever read it.
fn hostile(mark: &Path) -> String {
    let m = mark.display();
    format!("$(touch {m}) `touch {m}`; touch {m} && touch {m} | touch {m} > {m}")
}

#[test]
fn row_and_profile_values_reach_the_server_verbatim_never_through_a_shell() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("MARK");
    let tag = hostile(&mark);
    let p = profile(dir.path(), "iso-verbatim", "{host}", &["--tag", &tag]);
    let env_value = tag.replace("\"", "");
    let row = edited_row(
        dir.path(),
        "E19-env.yaml",
        &[(
            "  threads: 2\n",
            &format!("  threads: 2\n  env:\n    FAULT_TAG: \"{env_value}\"\n"),
        )],
    );
    let run = gate_json(&[
        row.to_str().unwrap(),
        "--trials",
        "1",
        "--server",
        p.to_str().unwrap(),
    ]);
    assert!(
        !run.result()["figures"].is_null(),
        "{}",
        run.result()["reason"]
    );
    let log = log_of(&run);
    // Python's repr of the exact strings: both arrived byte for byte.
    assert!(
        log.contains(&format!("tag {tag:?}").replace('"', "'")),
        "{log}"
    );
    assert!(
        log.contains(&format!("env FAULT_TAG {env_value:?}").replace('"', "'")),
        "{log}"
    );
    assert!(!mark.exists(), "a shell ran: {} exists", mark.display());
    run.assert_no_survivors();

    // The twin: the same text through a shell does create the mark, so the
    // check above would have caught one.
    std::process::Command::new("sh")
        .args(["-c", &format!("echo {tag}")])
        .status()
        .unwrap();
    assert!(
        mark.exists(),
        "the hostile text did nothing even in a shell; it proves nothing"
    );
}

#[test]
fn the_engine_never_names_a_shell_as_a_program() {
    // Every Command::new in runner/src outside unit tests takes a variable
    // (an interpreter path or argv[0] from a profile, which the loader
    // refuses when it is a shell) or a non-shell literal.
    const SHELLS: &[&str] = &[
        "sh", "bash", "dash", "zsh", "ksh", "fish", "csh", "cmd", "busybox",
    ];
    let mut offenders = Vec::new();
    let mut spawns = 0;
    let mut stack = vec![root().join("runner/src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            // Unit tests (which may use sh to build process trees) follow
            // the module's `#[cfg(test)]`.
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
            for (i, _) in code.match_indices("Command::new(") {
                spawns += 1;
                let arg = code[i + "Command::new(".len()..]
                    .split(')')
                    .next()
                    .unwrap()
                    .trim();
                let literal = arg.trim_matches('"');
                let name = Path::new(literal)
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or("");
                if arg.starts_with('"') && SHELLS.contains(&name) {
                    offenders.push(format!("{}: Command::new({arg})", path.display()));
                }
            }
            for needle in ["\"/bin/sh\"", "\"-c\", format!", "libc::system"] {
                if code.contains(needle) {
                    offenders.push(format!("{}: {needle}", path.display()));
                }
            }
        }
    }
    assert!(
        spawns >= 4,
        "found only {spawns} spawns; the scan is broken"
    );
    assert!(offenders.is_empty(), "{offenders:#?}");
}
