//! E15 end to end: workers that import the app themselves keep its runtime
//! alive; the fork control proves the detector can read "dead"; workers that
//! inherit the app across fork (gunicorn --preload) read dead and fail.

mod common;

use common::{edited, gate_json, runner};

#[test]
fn e15_passes_on_granian_with_two_workers() {
    let run = gate_json(&["E15"]);
    assert_eq!(run.verdict(), "pass", "{}", run.reason());
    let f = &run.result()["figures"];
    assert_eq!(f["workers"].as_array().unwrap().len(), 2, "{f}");
    assert!(f["dead_runtimes"].as_array().unwrap().is_empty());
    assert_eq!(f["fork_control"]["child"]["alive"], false);
    // The holding view runs in parallel on two processes, not on one.
    common::JsonRun::assert_pair_figures(&f["pair_ratio"], true);
    run.assert_no_survivors();
}

#[test]
fn e15_fails_when_workers_inherit_the_runtime_across_fork() {
    // gunicorn --preload imports the app in the master and forks: every
    // worker's runtime thread is gone.
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("gunicorn-preload.yaml");
    std::fs::write(
        &profile,
        r#"name: gunicorn-preload
package: gunicorn
argv: ["{python}", "-m", "gunicorn", "--chdir", "{app_dir}", "-b", "{host}:{port}", "-k", "gthread", "{knobs}", "{app}"]
knobs:
  threads: ["--threads", "{threads}"]
  workers: ["-w", "{workers}"]
  preload: ["--preload"]
  no_preload: []
ready:
  path: /
  timeout_ms: 20000
stop_grace_ms: 3000
"#,
    )
    .unwrap();
    let row = edited(
        "E15",
        dir.path(),
        "E15-preload.yaml",
        &[("  preload: false", "  preload: true")],
    );
    let run = gate_json(&[row.to_str().unwrap(), "--server", profile.to_str().unwrap()]);
    assert_eq!(run.verdict(), "fail", "{}", run.reason());
    assert!(
        run.reason().contains("runtime does not run in worker"),
        "{}",
        run.reason()
    );
    run.assert_no_survivors();
}

#[test]
fn e15_cannot_judge_with_a_blind_detector() {
    // A naive detector ("the runtime has beaten once") reads alive in a
    // forked child; the fork control must catch it rather than pass.
    let out = runner()
        .env("BAREAPP_RUNTIME_CHECK", "ever-beat")
        .args(["gate", "E15", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let reason = report["results"][0]["reason"].as_str().unwrap();
    assert!(reason.contains("detector is blind"), "{reason}");
}

#[test]
fn e15_with_preload_is_not_applicable_on_granian() {
    // granian has no way to import the app in its master.
    let dir = tempfile::tempdir().unwrap();
    let row = edited(
        "E15",
        dir.path(),
        "E15-preload.yaml",
        &[("  preload: false", "  preload: true")],
    );
    let run = gate_json(&[row.to_str().unwrap()]);
    assert_eq!(run.verdict(), "not-applicable", "{}", run.reason());
    assert_eq!(run.code, 0);
    assert!(run.reason().contains("preload"), "{}", run.reason());
}

#[test]
fn e15_fails_when_the_server_runs_one_worker() {
    // A profile that drops the workers knob's value: granian then runs one
    // worker, and the census must notice.
    let dir = tempfile::tempdir().unwrap();
    let granian =
        std::fs::read_to_string(common::root().join("specs/servers/granian.yaml")).unwrap();
    let profile = dir.path().join("granian-one-worker.yaml");
    std::fs::write(
        &profile,
        granian
            .replace("name: granian", "name: granian-one-worker")
            .replace(r#"workers: ["--workers", "{workers}"]"#, "workers: []"),
    )
    .unwrap();
    let run = gate_json(&["E15", "--server", profile.to_str().unwrap()]);
    assert_eq!(run.verdict(), "fail", "{}", run.reason());
    assert!(run.reason().contains("distinct worker"), "{}", run.reason());
    run.assert_no_survivors();
}
