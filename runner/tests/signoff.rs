//! `runner signoff`: the bundle a release is judged by. Its reports validate
//! against their schemas, it holds every server log and the environment
//! fingerprint, its exit code summarises its verdicts, and by default each
//! row spends its whole trial budget.

mod common;
mod schemas;

use std::path::Path;

use common::runner;
use schemas::{assert_junit, json_errors, json_schema};
use serde_json::Value;

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn signoff_writes_a_bundle_whose_exit_code_summarises_it() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("bundle");
    let out = runner()
        .args(["signoff", "--server", "granian", "--trials", "2", "--out"])
        .arg(&bundle)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);

    let report = read_json(&bundle.join("report.json"));
    let errors = json_errors(&json_schema(), &report);
    assert!(errors.is_empty(), "{errors:#?}");
    let results = report["results"].as_array().unwrap();
    let ids: Vec<&str> = results
        .iter()
        .map(|r| r["row"]["id"].as_str().unwrap())
        .collect();
    // Every row in specs/, in id order.
    let rows = runner::spec::row::resolve_rows(&common::root().join("specs"), &[]).unwrap();
    let wanted: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, wanted, "every row");
    assert!(wanted.contains(&"E19") && wanted.len() >= 3);
    let verdicts: Vec<&str> = results
        .iter()
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    let expected = if verdicts.contains(&"fail") {
        1
    } else if verdicts.contains(&"cannot-judge") {
        2
    } else {
        0
    };
    assert_eq!(out.status.code(), Some(expected), "{verdicts:?}\n{stderr}");

    assert_junit(&std::fs::read_to_string(bundle.join("junit.xml")).unwrap());
    let md = std::fs::read_to_string(bundle.join("report.md")).unwrap();
    assert!(
        md.contains("| row | server | verdict | figures | reason |"),
        "{md}"
    );
    assert!(md.contains("- server: granian (granian "), "{md}");

    // Every server each gate started has its log in the bundle.
    for r in results {
        let servers: Vec<&serde_json::Value> = r["servers"].as_array().unwrap().iter().collect();
        for s in servers {
            let name = Path::new(s["log"].as_str().unwrap()).file_name().unwrap();
            assert!(
                bundle.join("logs").join(name).is_file(),
                "no logs/{name:?} in the bundle"
            );
        }
    }
    // The listing names each file with its size.
    assert!(stdout.contains(&format!("sign-off bundle: {}", bundle.display())));
    for f in ["report.json", "report.md", "junit.xml", "env.json"] {
        let size = std::fs::metadata(bundle.join(f)).unwrap().len();
        assert!(stdout.contains(&format!("{size:>9}  {f}")), "{stdout}");
    }

    let env = read_json(&bundle.join("env.json"));
    assert_eq!(env["runner_version"], env!("CARGO_PKG_VERSION"));
    let commit = env["git"]["commit"]
        .as_str()
        .expect("the checkout's commit");
    assert!(commit.len() == 40 && commit.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(env["server"]["name"], "granian");
    assert!(env["server"]["version"]
        .as_str()
        .unwrap()
        .starts_with("granian "));
    assert!(env["python"]["version"].as_str().unwrap().starts_with("3."));
    assert_eq!(env["os"]["family"], std::env::consts::OS);
    assert!(env["cpu"]["available"].as_u64().unwrap() >= 1);
    assert!(env["cpu"]["model"].is_string(), "{}", env["cpu"]);
    for at in ["start", "end"] {
        let load = env["load_average"][at].as_array().unwrap();
        assert_eq!(load.len(), 3);
        assert!(load.iter().all(|l| l.as_f64().unwrap() >= 0.0));
    }
    assert!(env["started_at"].as_str().unwrap() <= env["finished_at"].as_str().unwrap());
}

#[test]
fn signoff_spends_each_rows_whole_trial_budget_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = dir.path().join("e19");
    let out = runner()
        .args(["signoff", "E19", "--server", "granian", "--out"])
        .arg(&bundle)
        .output()
        .unwrap();
    let report = read_json(&bundle.join("report.json"));
    let r = &report["results"][0];
    // specs/E19.yaml: trials min 5, max 15. A CI gate stops at 5 when the
    // verdict is clear; sign-off runs all 15.
    let row: serde_norway::Value = serde_norway::from_str(
        &std::fs::read_to_string(common::root().join("specs/E19.yaml")).unwrap(),
    )
    .unwrap();
    let max = row["trials"]["max"].as_u64().unwrap();
    assert!(max > row["trials"]["min"].as_u64().unwrap());
    assert_eq!(
        r["figures"]["trials"].as_u64(),
        Some(max),
        "{}",
        r["reason"]
    );
    assert!(out.status.code().unwrap() <= 2);
}

#[test]
fn signoff_refuses_a_folder_that_already_holds_something() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "mine").unwrap();
    let out = runner()
        .args(["signoff", "--server", "granian", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--out") && stderr.contains("not empty"),
        "{stderr}"
    );
    assert!(!dir.path().join("report.json").exists());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("keep.txt")).unwrap(),
        "mine"
    );
}
