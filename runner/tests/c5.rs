//! C5 end to end on real granian: a slow view does not pin the other
//! kept-alive connections; its control (one thread) shows the pinning.

mod common;

use common::{edited, gate_json};

#[test]
fn c5_passes_with_two_threads() {
    let run = gate_json(&["C5"]);
    assert_eq!(run.verdict(), "pass", "{}", run.reason());
    assert_eq!(run.code, 0);
    let f = &run.result()["figures"];
    assert!(f["under_test_ratio"].as_f64().unwrap() <= 0.2, "{f}");
    assert!(f["control_ratio"].as_f64().unwrap() >= 0.7, "{f}");
    // Two servers: threads=2 under test, threads=1 as the control.
    assert_eq!(run.result()["servers"].as_array().unwrap().len(), 2);
    run.assert_no_survivors();
}

#[test]
fn c5_fails_when_the_server_runs_one_thread_whatever_it_is_told() {
    // A profile whose threads knob always says 1: the mode under test asks
    // for two threads and gets one, so a slow view pins B.
    let dir = tempfile::tempdir().unwrap();
    let granian =
        std::fs::read_to_string(common::root().join("specs/servers/granian.yaml")).unwrap();
    let profile = dir.path().join("granian-one-thread.yaml");
    let one = granian
        .replace("name: granian", "name: granian-one-thread")
        .replace(
            r#"threads: ["--blocking-threads", "{threads}"]"#,
            r#"threads: ["--blocking-threads", "1"]"#,
        );
    assert_ne!(
        one,
        granian.replace("name: granian", "name: granian-one-thread"),
        "granian.yaml changed its threads knob"
    );
    std::fs::write(&profile, one).unwrap();
    let run = gate_json(&["C5", "--server", profile.to_str().unwrap()]);
    assert_eq!(run.verdict(), "fail", "{}", run.reason());
    assert_eq!(run.code, 1);
    assert!(run.reason().contains("B over S"), "{}", run.reason());
    run.assert_no_survivors();
}

#[test]
fn c5_cannot_judge_when_the_control_does_not_pin() {
    // A control with two threads cannot show pinning, so the probe could
    // not have failed: never a pass.
    let dir = tempfile::tempdir().unwrap();
    let row = edited(
        "C5",
        dir.path(),
        "C5-blind-control.yaml",
        // Three threads cannot pin B either (and differ from the mode under
        // test, so the row is not one measurement twice).
        &[(
            "      role: control\n      server:\n        threads: 1",
            "      role: control\n      server:\n        threads: 3",
        )],
    );
    let run = gate_json(&[row.to_str().unwrap()]);
    assert_eq!(run.verdict(), "cannot-judge", "{}", run.reason());
    assert_eq!(run.code, 2);
    assert!(
        run.reason().contains("control did not separate"),
        "{}",
        run.reason()
    );
    run.assert_no_survivors();
}

#[test]
fn c5_fails_when_each_kept_alive_connection_holds_a_thread_for_its_life() {
    // fixtures/faultserver --fault thread-per-connection: two threads serve
    // A and B, but a fresh third connection waits until an idle connection
    // times out (2 s here, over 3x S), and the server closes idle A and B
    // meanwhile. The third connection's wait is the figure that fails.
    let dir = tempfile::tempdir().unwrap();
    let profile = common::faultserver_profile(
        dir.path(),
        "thread-per-connection",
        &["--idle-timeout-s", "2"],
    );
    let run = gate_json(&["C5", "--server", profile.to_str().unwrap()]);
    assert_eq!(run.verdict(), "fail", "{}", run.reason());
    assert_eq!(run.code, 1);
    assert!(
        run.reason()
            .contains("third connection over S (worst trial) read"),
        "{}",
        run.reason()
    );
    let third = run.result()["figures"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "third connection over S (worst trial)")
        .unwrap()
        .clone();
    assert_eq!(third["holds"], false, "{third}");
    assert!(third["value"].as_f64().unwrap() >= 3.0, "{third}");
    run.assert_no_survivors();
}

#[test]
fn c5_passes_on_the_fault_server_without_a_fault() {
    // The twin of the test above: the same server with one thread per
    // request (its default) serves the third connection at once.
    let dir = tempfile::tempdir().unwrap();
    let profile = common::faultserver_profile(dir.path(), "none", &["--idle-timeout-s", "2"]);
    let run = gate_json(&["C5", "--server", profile.to_str().unwrap()]);
    assert_eq!(run.verdict(), "pass", "{}", run.reason());
    assert_eq!(run.code, 0);
    run.assert_no_survivors();
}
