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
fn check_of_a_folder_checks_every_row_sweep_row_and_profile_in_it() {
    // `check specs/` read the folder as a file ("Is a directory"); no
    // PATH is specs/ too.
    for args in [&["check", "specs/"][..], &["check"]] {
        let out = runner().args(args).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stdout}");
        for checked in [
            "E19.yaml (E19)",
            "sweeps/minilm-threads.yaml (minilm-threads)",
            "servers/granian.yaml (server granian)",
        ] {
            assert!(stdout.contains(checked), "{args:?}: {stdout}");
        }
    }
    // The twin: a folder of the same layout with one bad row and one bad
    // profile is exit 2, naming both; the good row is still checked.
    let dir = tempfile::tempdir().unwrap();
    let root = common::root();
    std::fs::copy(root.join("specs/E19.yaml"), dir.path().join("E19.yaml")).unwrap();
    std::fs::write(dir.path().join("bad.yaml"), "id: bad\n").unwrap();
    std::fs::create_dir(dir.path().join("servers")).unwrap();
    std::fs::write(dir.path().join("servers/odd.yaml"), "name: odd\nargv: 3\n").unwrap();
    runner()
        .arg("check")
        .arg(dir.path())
        .assert()
        .code(2)
        .stdout(contains("E19.yaml (E19)"))
        .stderr(contains("bad.yaml"))
        .stderr(contains("odd.yaml"));
    // A folder with nothing to check says so.
    let empty = tempfile::tempdir().unwrap();
    runner()
        .arg("check")
        .arg(empty.path())
        .assert()
        .code(2)
        .stderr(contains("a folder with no .yaml rows"));
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

fn schema_matches(checked_in: &str) -> Result<(), String> {
    generated_matches(&["schema"], "specs/row.schema.json", checked_in)
}

fn generated_matches(args: &[&str], file: &str, checked_in: &str) -> Result<(), String> {
    let out = runner().args(args).output().unwrap();
    let generated = String::from_utf8(out.stdout).unwrap();
    if generated == checked_in {
        Ok(())
    } else {
        Err(format!(
            "{file} is out of date: run `cargo run -p runner -- {} > {file}`",
            args.join(" ")
        ))
    }
}

#[test]
fn the_checked_in_report_schema_is_current() {
    let file = "runner/schema/report.schema.json";
    let checked_in = std::fs::read_to_string(common::root().join(file)).unwrap();
    generated_matches(&["schema", "--report"], file, &checked_in).unwrap();
    // Twin: a schema that lost a probe kind's figures is caught.
    let stale = checked_in.replacen("\"keepalive-isolation\"", "\"keepalive\"", 1);
    assert_ne!(stale, checked_in);
    assert!(generated_matches(&["schema", "--report"], file, &stale).is_err());
}

#[test]
fn every_checked_in_schema_is_current() {
    // (what, a name the schema must hold, so a stale copy can be made)
    for (what, file, key) in [
        ("row", "specs/row.schema.json", "\"worker-census\""),
        (
            "report",
            "runner/schema/report.schema.json",
            "\"keepalive-isolation\"",
        ),
        (
            "sweep-row",
            "specs/sweeps/row.schema.json",
            "\"request_timeout_ms\"",
        ),
        (
            "sweep-report",
            "runner/schema/sweep-report.schema.json",
            "\"digests_checked\"",
        ),
        (
            "advise-report",
            "runner/schema/advise-report.schema.json",
            "\"control_unconvoyed\"",
        ),
    ] {
        let checked_in = std::fs::read_to_string(common::root().join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        generated_matches(&["schema", what], file, &checked_in).unwrap();
        // Twin: the same file with a field renamed is caught.
        let stale = checked_in.replacen(key, "\"renamed\"", 1);
        assert_ne!(stale, checked_in, "{file} has no {key}");
        let e = generated_matches(&["schema", what], file, &stale).unwrap_err();
        assert!(
            e.contains(&format!("runner -- schema {what} > {file}")),
            "{e}"
        );
    }
}

#[test]
fn the_checked_in_row_schema_is_current() {
    let checked_in = std::fs::read_to_string(common::root().join("specs/row.schema.json")).unwrap();
    schema_matches(&checked_in).unwrap();
    // Twin: a schema that lost a probe block is caught.
    let stale = checked_in.replace("\"worker-census\"", "\"worker-censu\"");
    assert!(schema_matches(&stale).is_err());
    // Editors reject unknown keys, like the runner does.
    assert!(checked_in.contains("\"additionalProperties\": false"));
}

fn check_row(text: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("row.yaml");
    std::fs::write(&path, text).unwrap();
    let out = runner()
        .args(["check", path.to_str().unwrap()])
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn row_language_errors_name_file_line_and_key() {
    let e19 = std::fs::read_to_string(common::root().join("specs/E19.yaml")).unwrap();
    let c5 = std::fs::read_to_string(common::root().join("specs/C5.yaml")).unwrap();
    let cases: &[(&str, String, &str)] = &[
        (
            "unknown probe kind",
            e19.replace("probe: pair-ratio", "probe: pair-ration"),
            "unknown variant `pair-ration`",
        ),
        (
            "probe without its block",
            e19.replace("probe: pair-ratio", "probe: keepalive-isolation"),
            "is a pair-ratio block",
        ),
        (
            "mode without a path",
            e19.replace("      path: /work?mode=hold\n", ""),
            "`pair-ratio.modes.holding.role`: needs a `path`",
        ),
        (
            "two controls",
            e19.replace("role: under-test", "role: control"),
            "a second Control mode",
        ),
        (
            "path on a keepalive mode",
            c5.replace(
                "      role: control\n",
                "      role: control\n      path: /x\n",
            ),
            "takes no `path`",
        ),
        (
            "wrong type",
            e19.replace("threads: 2", "threads: two"),
            "invalid type",
        ),
        (
            "threads zero",
            e19.replace("threads: 2", "threads: 0"),
            "`server.threads`: is 0",
        ),
        (
            "trials max under min",
            e19.replace("max: 15", "max: 2"),
            "`trials.max`",
        ),
        (
            "one measurement twice",
            e19.replace("path: /work?mode=release", "path: /work?mode=hold"),
            "are the same measurement",
        ),
    ];
    for (what, text, expected) in cases {
        let (code, stderr) = check_row(text);
        assert_eq!(code, 2, "{what}: {stderr}");
        assert!(
            stderr.contains(expected),
            "{what}: expected {expected:?} in {stderr}"
        );
        assert!(
            stderr.contains("row.yaml:"),
            "{what}: no file:line in {stderr}"
        );
    }
    // Twin: the unedited rows pass the same check.
    assert_eq!(check_row(&e19).0, 0);
    assert_eq!(check_row(&c5).0, 0);
}

#[test]
fn a_missing_python_names_the_flag() {
    runner()
        .args(["--python", "/nonexistent/python3", "gate", "E19"])
        .assert()
        .code(2)
        .stderr(contains("/nonexistent/python3"))
        .stderr(contains("--python"));
}

#[test]
fn an_explicit_python_is_used_as_it_is() {
    // Twin of the above: the venv's own interpreter, given explicitly, works.
    runner().arg("prepare").assert().code(0);
    let python = common::root().join(".gates/venv/bin/python");
    let pins =
        std::fs::read_to_string(common::root().join("specs/servers/requirements.txt")).unwrap();
    let granian = pins
        .lines()
        .find_map(|l| l.strip_prefix("granian=="))
        .expect("granian is pinned");
    runner()
        .args(["--python", python.to_str().unwrap(), "prepare"])
        .assert()
        .code(0)
        .stdout(contains(format!("python: {}", python.display())))
        .stdout(contains(format!("granian {granian}")));
}

/// `runner load` against a port nobody listens on (every request an error,
/// exit 2, no server needed), with the given report flags.
fn load_dead_port(flags: &[&str], json_file: Option<&std::path::Path>) -> std::process::Output {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut cmd = runner();
    cmd.args([
        "load",
        "--path",
        "/",
        "--duration",
        "100ms",
        "--warmup",
        "0s",
    ])
    .arg("--addr")
    .arg(format!("127.0.0.1:{port}"))
    .args(flags);
    if let Some(f) = json_file {
        cmd.arg("--json-file").arg(f);
    }
    cmd.output().unwrap()
}

#[test]
fn json_prints_and_json_file_writes_the_same_document() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("new/load.json");
    let out = load_dead_port(&["--json"], Some(&file));
    assert_eq!(out.status.code(), Some(2));
    let printed: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e})"));
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(printed, written);
    assert!(printed["errors"].is_object(), "{printed}");
    // Its twin: without --json, stdout is the text line, and --json-file
    // still writes.
    let file = dir.path().join("text.json");
    let out = load_dead_port(&[], Some(&file));
    assert!(serde_json::from_slice::<serde_json::Value>(&out.stdout).is_err());
    assert!(file.is_file());
    // A folder is refused before anything runs.
    let out = load_dead_port(&[], Some(dir.path()));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--json-file"));
}
