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
    assert_eq!(run.result()["other_servers"].as_array().unwrap().len(), 1);
    run.assert_no_survivors();
}

#[test]
fn c5_fails_when_the_mode_under_test_has_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let row = edited(
        "C5",
        dir.path(),
        "C5-one-thread.yaml",
        &[("      role: under-test\n      server:\n        threads: 2", "      role: under-test\n      server:\n        threads: 1")],
    );
    let run = gate_json(&[row.to_str().unwrap()]);
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
        &[("      role: control\n      server:\n        threads: 1", "      role: control\n      server:\n        threads: 2")],
    );
    let run = gate_json(&[row.to_str().unwrap()]);
    assert_eq!(run.verdict(), "cannot-judge", "{}", run.reason());
    assert_eq!(run.code, 2);
    assert!(run.reason().contains("control did not separate"), "{}", run.reason());
    run.assert_no_survivors();
}
