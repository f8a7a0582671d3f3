//! Shared by the integration tests: run the real `runner` binary against the
//! real fixture and a real server, one gate at a time.
//!
//! Tests run in parallel; the runner itself makes gates take turns on the
//! machine (`.gates/measure.lock`), so their figures do not disturb each other.
//!
//! The first `runner()` of a test process makes the venv ready for every
//! row in specs/ (the servers and each row's `requires:`), so that
//! `cargo test --workspace` on a fresh clone needs no step before it; the
//! runner's setup lock makes parallel test processes prepare it once.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use assert_cmd::Command;
use serde_json::Value;

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The venv ready for every row (see the module's note); panics with the
/// reason if it cannot be made ready.
pub fn every_row_ready() {
    static READY: OnceLock<()> = OnceLock::new();
    READY.get_or_init(|| {
        let project = runner::host::project::Project::checkout(root());
        let rows = runner::spec::row::resolve_rows(&project.specs_dir(), &["all".to_string()])
            .unwrap_or_else(|e| panic!("specs/: {e}"));
        // Straight to stderr: libtest captures print! and eprint! only, and
        // the line should show the first time, whichever test asks.
        let mut say = |line: &str| {
            let _ = writeln!(std::io::stderr(), "tests: {line}");
        };
        runner::setup::every_row(&project, runner::host::pyenv::Want::All, &rows, &mut say)
            .unwrap_or_else(|e| panic!("cannot prepare the venv for the tests: {e}"));
    });
}

/// `runner` run from the project root, with the venv ready for every row.
pub fn runner() -> Command {
    every_row_ready();
    let mut cmd = Command::cargo_bin("runner").unwrap();
    cmd.current_dir(root())
        .timeout(std::time::Duration::from_secs(600));
    cmd
}

/// The output of `runner ... --json`, its exit code and stderr.
pub struct JsonRun {
    pub code: i32,
    pub report: Value,
    pub stderr: String,
}

pub fn gate_json(args: &[&str]) -> JsonRun {
    let out = runner()
        .arg("gate")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    json_run(out)
}

/// The JSON report of a finished `runner ... --json`.
pub fn json_run(out: std::process::Output) -> JsonRun {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}\nstderr:\n{stderr}"));
    JsonRun {
        code: out.status.code().unwrap_or(-1),
        report,
        stderr,
    }
}

impl JsonRun {
    pub fn result(&self) -> &Value {
        &self.report["results"][0]
    }

    pub fn verdict(&self) -> &str {
        self.result()["verdict"].as_str().unwrap()
    }

    pub fn ratio(&self, which: &str) -> f64 {
        self.result()["figures"][which]["ratio"].as_f64().unwrap()
    }

    /// Asserts that the figures that decided a pair-ratio verdict (`f` is
    /// its figures) say the mode under test ran in parallel (`parallel`) or
    /// serialised, against the control: the wall ratios when the wall gap
    /// decided, the scheduler witness's parallelism when the machine had no
    /// free core and the witness decided alone.
    pub fn assert_pair_figures(f: &Value, parallel: bool) {
        if f["witness"] == "decides" {
            let p = |m: &str, k: &str| f[m]["witness"][k]["median"].as_f64().unwrap();
            assert!(p("control", "parallelism") <= 1.6, "{f}");
            if parallel && f["ruling"] == "on-two-cpus" {
                // The on-CPU proof: on two CPUs at once, which the GIL forbids.
                assert!(p("under_test", "on_cpu_parallelism") >= 1.3, "{f}");
                assert!(p("control", "on_cpu_parallelism") <= 1.1, "{f}");
            } else if parallel && f["ruling"] == "at-once-together" {
                // The samples' order: both serving threads runnable far
                // more often than the control's, P past the turns bound.
                use runner::probe::pair_ratio::rulebook as rb;
                let (t, ct) = (p("under_test", "together"), p("control", "together"));
                let (v, c) = (p("under_test", "parallelism"), p("control", "parallelism"));
                assert!(t >= rb::TOGETHER_AT_ONCE_AT_LEAST, "{f}");
                assert!(t - ct >= rb::TOGETHER_GAP_AT_LEAST, "{f}");
                assert!(v >= rb::NEVER_TURNS_AT, "{f}");
                assert!(v - c >= rb::TOGETHER_P_GAP_AT_LEAST, "{f}");
            } else if parallel {
                assert!(p("under_test", "parallelism") >= 1.7, "{f}");
                assert!(p("under_test", "unconvoyed") >= 1.7, "{f}");
            } else {
                assert!(p("under_test", "unconvoyed") <= 1.4, "{f}");
            }
        } else {
            let r = |m: &str| f[m]["ratio"].as_f64().unwrap();
            assert!(r("control") >= 1.7, "{f}");
            if parallel {
                assert!(r("under_test") <= 1.35, "{f}");
            } else {
                assert!(r("under_test") >= 1.35, "{f}");
            }
        }
    }

    pub fn reason(&self) -> &str {
        self.result()["reason"].as_str().unwrap()
    }

    /// Asserts that no process of any server this run started is alive.
    pub fn assert_no_survivors(&self) {
        for r in self.report["results"].as_array().unwrap() {
            let servers: Vec<&serde_json::Value> =
                r["servers"].as_array().into_iter().flatten().collect();
            for s in servers {
                assert_eq!(s["survivors"], false, "the runner saw survivors: {s}");
                if let Some(pgid) = s["pgid"].as_i64() {
                    assert!(
                        !runner::host::process::group_alive(pgid as i32),
                        "process group {pgid} still has live members after the runner exited"
                    );
                }
            }
        }
    }
}

/// Writes a copy of specs/E19.yaml with `edits` (from, to) applied into `dir`.
pub fn edited_row(dir: &Path, name: &str, edits: &[(&str, &str)]) -> PathBuf {
    edited("E19", dir, name, edits)
}

/// Writes a copy of specs/ROW.yaml with `edits` (from, to) applied into `dir`.
pub fn edited(row: &str, dir: &Path, name: &str, edits: &[(&str, &str)]) -> PathBuf {
    let mut text = std::fs::read_to_string(root().join(format!("specs/{row}.yaml"))).unwrap();
    for (from, to) in edits {
        assert!(
            text.contains(from),
            "specs/E19.yaml no longer contains {from:?}"
        );
        text = text.replace(from, to);
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Writes a server profile into `dir` that starts fixtures/faultserver with
/// `--fault fault` and `extra` flags (threads from the row, like a real
/// server's knob), and returns its path.
pub fn faultserver_profile(dir: &Path, fault: &str, extra: &[&str]) -> PathBuf {
    let script = root().join("fixtures/faultserver/faultserver.py");
    let mut argv: Vec<String> = [
        "{python}",
        script.to_str().unwrap(),
        "--host",
        "{host}",
        "--port",
        "{port}",
        "--app-dir",
        "{app_dir}",
        "--fault",
        fault,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    argv.extend(extra.iter().map(|s| s.to_string()));
    argv.push("{knobs}".into());
    let profile = serde_json::json!({
        "name": format!("fault-{fault}"),
        "argv": argv,
        "knobs": { "threads": ["--threads", "{threads}"] },
        "ready": { "path": "/", "timeout_ms": 20000 },
        "env": { "PYTHONUNBUFFERED": "1" },
        "stop_grace_ms": 1000,
    });
    let path = dir.join(format!("fault-{fault}.yaml"));
    // JSON is YAML: the profile loader reads it as is.
    std::fs::write(&path, profile.to_string()).unwrap();
    path
}

/// The fenced ```yaml block that contains `marker`, dedented, from the
/// README or the page it sends installed users to (docs/install.md).
pub fn readme_yaml(marker: &str) -> String {
    let readme = ["README.md", "docs/install.md"]
        .map(|f| std::fs::read_to_string(root().join(f)).unwrap())
        .join("\n");
    let mut blocks = Vec::new();
    let mut current: Option<Vec<&str>> = None;
    for line in readme.lines() {
        match (&mut current, line.trim_start()) {
            (None, "```yaml") => current = Some(Vec::new()),
            (Some(_), "```") => blocks.extend(current.take()),
            (Some(lines), _) => lines.push(line),
            (None, _) => {}
        }
    }
    let block = blocks
        .into_iter()
        .find(|b| b.iter().any(|l| l.contains(marker)))
        .unwrap_or_else(|| panic!("README has no yaml block with {marker:?}"));
    let indent = block
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    block
        .iter()
        .map(|l| l.get(indent..).unwrap_or("").to_string() + "\n")
        .collect()
}
