//! SIGTERM and SIGINT to the runner mid-gate: the server's whole process
//! group is gone, the exit code is 128 + signal, and the report says where
//! the run was.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::root;

fn interrupt_mid_gate(signal: i32, expected_code: i32, expected_name: &str) {
    let exe = assert_cmd::cargo::cargo_bin("runner");
    let mut child = Command::new(exe)
        .current_dir(root())
        .args(["gate", "E19", "--trials", "200", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait (bounded) for the server to be up and trials under way.
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "runner ended before its server was ready"
        );
        if line.contains("server ready") {
            break;
        }
        assert!(Instant::now() < deadline, "no server within 300 s");
    }
    std::thread::sleep(Duration::from_millis(300));
    let sent = Instant::now();
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, signal) };
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    assert_eq!(out.status.code(), Some(expected_code));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let note = &report["interrupted"];
    assert_eq!(note["signal"], expected_name);
    assert_eq!(note["during"], "E19 on granian");
    let pgid = note["server_pgid"]
        .as_i64()
        .expect("the report names the server's process group") as i32;
    assert!(
        !runner::host::process::group_alive(pgid),
        "server group {pgid} survived the runner"
    );
    // Stopping is bounded by the profile's grace (3 s) plus SIGKILL.
    assert!(took < Duration::from_secs(10), "took {took:?} to stop");
}

#[test]
fn sigterm_mid_gate_stops_the_server_and_exits_143() {
    interrupt_mid_gate(libc::SIGTERM, 143, "SIGTERM");
}

#[test]
fn sigint_mid_gate_stops_the_server_and_exits_130() {
    interrupt_mid_gate(libc::SIGINT, 130, "SIGINT");
}
