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
    // Each worker's PSS, named by the census (Linux: smaps_rollup).
    if cfg!(target_os = "linux") {
        let procs = pss_processes(f);
        let workers: Vec<i64> = procs.iter().filter(|p| p.2).map(|p| p.0).collect();
        assert_eq!(workers.len(), 2, "{f}");
        assert!(procs.iter().all(|p| p.1 > 0), "{f}");
        let sum: u64 = procs.iter().map(|p| p.1).sum();
        assert_eq!(f["pss"]["peak_kib"].as_u64(), Some(sum), "{f}");
    }
    run.assert_no_survivors();
}

#[test]
fn e15_fails_when_workers_inherit_the_runtime_across_fork() {
    // gunicorn --preload imports the app in the master and forks: every
    // worker's runtime thread is gone.
    let dir = tempfile::tempdir().unwrap();
    let profile = gunicorn_preload(dir.path());
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

/// A gunicorn profile that can import the app in the master (`--preload`).
fn gunicorn_preload(dir: &std::path::Path) -> std::path::PathBuf {
    let profile = dir.join("gunicorn-preload.yaml");
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
  timeout_ms: 60000
stop_grace_ms: 3000
"#,
    )
    .unwrap();
    profile
}

/// Each process of the census's PSS figures: (pid, KiB, worker).
fn pss_processes(f: &serde_json::Value) -> Vec<(i64, u64, bool)> {
    f["pss"]["processes"]
        .as_array()
        .unwrap_or_else(|| panic!("no PSS figures: {f}"))
        .iter()
        .map(|p| {
            (
                p["pid"].as_i64().unwrap(),
                p["pss_kib"].as_u64().unwrap(),
                p["worker"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn e15_minilm_fails_when_workers_inherit_the_tokenizers_pool_across_fork() {
    // The model app's real runtime: gunicorn --preload loads the model (and
    // starts the tokenizers pool) in the master, then forks; no worker has
    // the pool's threads. Needs the model packages (`prepare --rows all`);
    // without them the row must say so, never pass.
    let dir = tempfile::tempdir().unwrap();
    let profile = gunicorn_preload(dir.path());
    let row = edited(
        "E15-minilm",
        dir.path(),
        "E15-minilm-preload.yaml",
        &[("  preload: false", "  preload: true")],
    );
    let run = gate_json(&[row.to_str().unwrap(), "--server", profile.to_str().unwrap()]);
    if run.verdict() == "not-applicable" {
        assert!(
            run.reason().contains("runner prepare --rows all"),
            "{}",
            run.reason()
        );
        return;
    }
    assert_eq!(run.verdict(), "fail", "{}", run.reason());
    assert!(
        run.reason().contains("runtime does not run in worker"),
        "{}",
        run.reason()
    );
    let f = &run.result()["figures"];
    // Imported once, in the master; every worker that replied, before the
    // fork control or after it, read its pool dead. (Which workers replied
    // is the balancer's choice: all 16 replies once reached one of two.)
    assert_eq!(f["import_pids"].as_array().unwrap().len(), 1, "{f}");
    let pids = |k: &str| -> std::collections::BTreeSet<i64> {
        f[k].as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_i64().unwrap())
            .collect()
    };
    let replied: std::collections::BTreeSet<i64> = pids("workers")
        .union(&pids("workers_after"))
        .copied()
        .collect();
    assert!(!replied.is_empty(), "{f}");
    assert_eq!(pids("dead_runtimes"), replied, "{f}");
    // The forked workers share the master's weights: PSS splits them. The
    // group holds the master and its two workers; the census names as
    // workers those that replied.
    let procs = pss_processes(f);
    assert!(procs.len() >= 3, "{f}");
    let workers: std::collections::BTreeSet<i64> =
        procs.iter().filter(|p| p.2).map(|p| p.0).collect();
    assert_eq!(workers, replied, "{f}");
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
