//! Checks on the GitHub Actions workflow (.github/workflows/gates.yml),
//! which cannot run here: every command its steps run must be one README.md
//! documents (so the README stays the truth about set-up and tests), and it
//! must have the parts CI relies on (a Linux and a macOS arm64 job, a macOS
//! job that lints and tests the portable witness's reader, Python
//! 3.11, the venv cache, logs uploaded on failure, a conformance job per
//! server that prepares only its server and runs `gate all` on it, and a
//! job after them that merges their reports with `matrix --from`).

use serde_norway::Value;

/// Every shell command the workflow's `run:` steps execute, one per entry:
/// lines joined at trailing backslashes, split at `&&`, `||`, `;` and `|`,
/// blank lines and comments dropped, whitespace collapsed.
pub fn run_commands(workflow: &str) -> Result<Vec<String>, String> {
    let doc: Value =
        serde_norway::from_str(workflow).map_err(|e| format!("the workflow is not YAML: {e}"))?;
    let jobs = doc
        .get("jobs")
        .and_then(Value::as_mapping)
        .ok_or("the workflow has no `jobs:`")?;
    let mut out = Vec::new();
    for (name, job) in jobs {
        let steps = job
            .get("steps")
            .and_then(Value::as_sequence)
            .ok_or_else(|| format!("job {name:?} has no `steps:`"))?;
        for step in steps {
            if let Some(run) = step.get("run") {
                let script = run
                    .as_str()
                    .ok_or_else(|| format!("job {name:?}: a `run:` that is not a string"))?;
                out.extend(commands_in(script));
            }
        }
    }
    Ok(out)
}

/// The commands of one shell script (see [`run_commands`]).
pub fn commands_in(script: &str) -> Vec<String> {
    let joined = script.replace("\\\n", " ");
    let mut out = Vec::new();
    for line in joined.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        for part in line.split(['&', '|', ';']) {
            let command = normalise(part);
            if !command.is_empty() {
                out.push(command);
            }
        }
    }
    out
}

/// Every command line of README.md's shell code blocks (```sh, ```bash,
/// ```console), without a `$ ` prompt or a trailing `# comment`.
pub fn documented_commands(readme: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_shell = false;
    let mut in_other = false;
    for line in readme.lines() {
        let t = line.trim();
        if let Some(lang) = t.strip_prefix("```") {
            if in_shell || in_other {
                in_shell = false;
                in_other = false;
            } else if matches!(lang.trim(), "sh" | "bash" | "shell" | "console") {
                in_shell = true;
            } else {
                in_other = true;
            }
            continue;
        }
        if !in_shell {
            continue;
        }
        let t = t.strip_prefix("$ ").unwrap_or(t);
        let t = match t.find(" #") {
            Some(i) => &t[..i],
            None => t,
        };
        if t.starts_with('#') {
            continue;
        }
        out.extend(commands_in(t));
    }
    out
}

/// The workflow's commands that README.md does not document.
pub fn undocumented(workflow: &str, readme: &str) -> Result<Vec<String>, String> {
    let documented = documented_commands(readme);
    Ok(run_commands(workflow)?
        .into_iter()
        .filter(|c| !documented.contains(c))
        .collect())
}

/// What the workflow lacks of what CI relies on; empty when it has it all.
pub fn missing_parts(workflow: &str) -> Result<Vec<String>, String> {
    let doc: Value =
        serde_norway::from_str(workflow).map_err(|e| format!("the workflow is not YAML: {e}"))?;
    let text = |v: &Value| serde_norway::to_string(v).unwrap_or_default();
    let jobs: Vec<&Value> = doc
        .get("jobs")
        .and_then(Value::as_mapping)
        .map(|m| m.values().collect())
        .unwrap_or_default();
    let runs_on = |os: &str| {
        jobs.iter().any(|j| {
            let r = j.get("runs-on").map(text).unwrap_or_default();
            let matrix = j.get("strategy").map(text).unwrap_or_default();
            r.contains(os) || (r.contains("matrix") && matrix.contains(os))
        })
    };
    let steps: Vec<&Value> = jobs
        .iter()
        .filter_map(|j| j.get("steps").and_then(Value::as_sequence))
        .flatten()
        .collect();
    let uses = |action: &str| -> Vec<&&Value> {
        steps
            .iter()
            .filter(|s| {
                s.get("uses")
                    .and_then(Value::as_str)
                    .is_some_and(|u| u.starts_with(action))
            })
            .collect()
    };
    let mut missing = Vec::new();
    if !runs_on("ubuntu-") {
        missing.push("a Linux job (runs-on: ubuntu-...)".to_string());
    }
    if !runs_on("macos-14") {
        missing.push("a macOS arm64 job (runs-on: macos-14)".to_string());
    }
    if !jobs.iter().any(|j| {
        let on_mac = j.get("runs-on").map(text).unwrap_or_default();
        let commands = job_commands(j);
        on_mac.contains("macos-14")
            && commands.iter().any(|c| {
                c.starts_with("cargo clippy")
                    && c.contains("-p runner")
                    && c.contains("-D warnings")
            })
            && commands.iter().any(|c| c == PORTABLE_TESTS)
    }) {
        missing.push(format!(
            "a macOS arm64 job (runs-on: macos-14) that runs clippy on the runner and `{PORTABLE_TESTS}` (the portable witness's macOS reader)"
        ));
    }
    if !uses("actions/setup-python")
        .iter()
        .any(|s| text(s).contains("3.11"))
    {
        missing.push("actions/setup-python with python-version 3.11".into());
    }
    if !uses("actions/cache")
        .iter()
        .any(|s| text(s).contains(".gates/venv"))
    {
        missing.push("an actions/cache step for .gates/venv".into());
    }
    if !uses("actions/cache")
        .iter()
        .any(|s| text(s).contains(".cargo"))
    {
        missing.push("an actions/cache step for cargo (~/.cargo, target)".into());
    }
    let uploads = uses("actions/upload-artifact");
    if !uploads.iter().any(|s| {
        let t = text(s);
        t.contains("failure()") && t.contains(".gates/logs") && t.contains(".gates/reports")
    }) {
        missing.push(
            "an actions/upload-artifact step with `if: failure()` uploading .gates/reports and .gates/logs"
                .into(),
        );
    }
    let commands = run_commands(workflow)?;
    let conformance = jobs.iter().find(|j| {
        let matrix = j.get("strategy").map(text).unwrap_or_default();
        SERVERS.iter().all(|s| matrix.contains(s))
    });
    match conformance {
        None => missing.push(format!(
            "a conformance job whose strategy matrix lists every server ({})",
            SERVERS.join(", ")
        )),
        Some(job) => {
            let job_commands = job_commands(job);
            for (part, what) in [
                (
                    "prepare --server",
                    "prepares only its server (`prepare --server`)",
                ),
                (
                    "gate all --server",
                    "runs `gate all --server` as its test step",
                ),
                ("--json-file", "writes its JSON report (`--json-file`)"),
            ] {
                if !job_commands.iter().any(|c| c.contains(part)) {
                    missing.push(format!("the conformance job {what}"));
                }
            }
        }
    }
    let merges = jobs.iter().any(|j| {
        j.get("needs").is_some() && job_commands(j).iter().any(|c| c.contains("matrix --from"))
    });
    if !merges || !commands.iter().any(|c| c.contains("matrix --from")) {
        missing.push("a job after the conformance jobs (`needs:`) that merges their reports with `matrix --from`".into());
    }
    Ok(missing)
}

/// The commands one job's `run:` steps execute (see [`run_commands`]).
fn job_commands(job: &Value) -> Vec<String> {
    job.get("steps")
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
        .filter_map(|s| s.get("run").and_then(Value::as_str))
        .flat_map(commands_in)
        .collect()
}

/// The macOS job's test command: the portable witness's reader on the
/// kernel it is written for, and the reduction's recorded samples.
pub const PORTABLE_TESTS: &str = "cargo test -p runner --lib kernel::portable";

/// The servers the conformance jobs must cover: the WSGI ones, and the
/// ASGI ones the ASGI rows run on.
pub const SERVERS: [&str; 7] = [
    "granian",
    "gunicorn",
    "uwsgi",
    "waitress",
    "uvicorn",
    "hypercorn",
    "granian-asgi",
];

fn normalise(command: &str) -> String {
    command.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_split_into_commands() {
        let script = "# set up\ncargo build \\\n  --workspace\n\ncargo run -p runner -- prepare && cargo test\n";
        assert_eq!(
            commands_in(script),
            vec![
                "cargo build --workspace",
                "cargo run -p runner -- prepare",
                "cargo test"
            ]
        );
    }

    #[test]
    fn readme_commands_come_from_shell_blocks_only() {
        let readme = "Run:\n\n```sh\ncargo test --workspace   # all of it\n$ cargo run -p runner -- gate E19\n```\n\n\
                      ```\n$ cargo run -p runner -- gate E19\nE19 ...\n```\n\n```yaml\nrun: rm -rf /\n```\n";
        assert_eq!(
            documented_commands(readme),
            vec!["cargo test --workspace", "cargo run -p runner -- gate E19"]
        );
    }
}
