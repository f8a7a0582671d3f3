//! The command line without servers: bad rows, bad flags, unknown ids.

mod common;

use common::runner;
use predicates::str::contains;

#[test]
fn unknown_row_lists_the_known_ones() {
    runner()
        .args(["gate", "E99"])
        .assert()
        .code(2)
        .stderr(contains("no row \"E99\""))
        .stderr(contains("E19"));
}

#[test]
fn known_row_validates() {
    runner()
        .args(["check"])
        .assert()
        .code(0)
        .stdout(contains("E19"));
}

#[test]
fn bad_row_names_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    let good = std::fs::read_to_string(common::root().join("specs/E19.yaml")).unwrap();
    std::fs::write(
        &bad,
        good.replace("  warmup: 1\n", "  warmup: 1\n  warmpu: 2\n"),
    )
    .unwrap();
    runner()
        .args(["check", bad.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(contains("bad.yaml:"))
        .stderr(contains("unknown field `warmpu`"));
}

#[test]
fn bad_flag_is_exit_2_naming_the_flag() {
    runner()
        .args(["gate", "E19", "--trials", "0"])
        .assert()
        .code(2)
        .stderr(contains("--trials 0"));
}
