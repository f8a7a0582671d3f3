//! The harness from outside, run as cargo and nextest run it: what it lists
//! (rows times installed servers, nothing else on stdout, no venv prepared),
//! how filters work, and what a failing, unjudged or not-applicable gate
//! makes of its trial. Each expected pass has a twin that fails.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::time::{Duration, Instant};

use assert_cmd::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The harness binary, from the project root, with none of the harness's
/// or GitHub's variables inherited.
fn harness(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gates-harness"));
    cmd.current_dir(dir)
        .timeout(Duration::from_secs(600))
        .env_remove("GATES_CANNOT_JUDGE")
        .env_remove("GATES_SERVERS")
        .env_remove("GATES_SPECS")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY");
    cmd
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(cmd: &mut Command) -> Run {
    let out = cmd.output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The names `--list` printed; panics on any other stdout line.
fn listed(stdout: &str) -> BTreeSet<String> {
    stdout
        .lines()
        .map(|l| {
            let name = l
                .strip_suffix(": test")
                .unwrap_or_else(|| panic!("not a trial line on stdout: {l:?}\n{stdout}"));
            assert!(
                name.split("::").count() == 2 && !name.contains(' '),
                "not ROW::SERVER: {name:?}"
            );
            name.to_string()
        })
        .collect()
}

fn yaml(path: &Path) -> serde_norway::Value {
    serde_norway::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
}

/// What the harness should list for `project` with rows from `specs`,
/// worked out apart from the harness: each row file's `id`, times each
/// profile whose package the venv has (or, with no venv yet, that
/// requirements.txt pins) or whose program is there; a row that needs no
/// server (`probe: gil-probe`) once, as `ID::python`.
fn expected(project: &Path, specs: &Path) -> BTreeSet<String> {
    let (python_rows, rows): (Vec<_>, Vec<_>) = yaml_files(specs)
        .iter()
        .map(|f| {
            let y = yaml(f);
            (
                y["id"].as_str().unwrap().to_string(),
                y["probe"].as_str() == Some("gil-probe"),
            )
        })
        .partition(|(_, python)| *python);
    let rows: Vec<String> = rows.into_iter().map(|(id, _)| id).collect();
    let venv = project.join(".gates/venv/bin/python");
    let pins = std::fs::read_to_string(project.join("specs/servers/requirements.txt")).unwrap();
    let mut servers = Vec::new();
    for f in yaml_files(&project.join("specs/servers")) {
        let p = yaml(&f);
        let name = p["name"].as_str().unwrap().to_string();
        let installed = if let Some(package) = p["package"].as_str() {
            if venv.exists() {
                StdCommand::new(&venv)
                    .args([
                        "-c",
                        &format!("import importlib.metadata as m; m.version({package:?})"),
                    ])
                    .output()
                    .unwrap()
                    .status
                    .success()
            } else {
                pins.lines()
                    .any(|l| l.to_lowercase().starts_with(&package.to_lowercase()))
            }
        } else {
            let program = &p["program"];
            let by_env = program["env"]
                .as_str()
                .and_then(std::env::var_os)
                .is_some_and(|path| Path::new(&path).is_file());
            let by_path = program["path"]
                .as_str()
                .is_some_and(|path| f.parent().unwrap().join(path).is_file());
            by_env || by_path
        };
        if installed {
            servers.push(name);
        }
    }
    assert!(!rows.is_empty() && !servers.is_empty(), "nothing to list");
    rows.iter()
        .flat_map(|r| servers.iter().map(move |s| format!("{r}::{s}")))
        .chain(python_rows.iter().map(|(id, _)| format!("{id}::python")))
        .collect()
}

#[test]
fn lists_exactly_rows_times_installed_servers_and_nothing_else() {
    let root = root();
    let out = run(harness(&root).arg("--list"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let names = listed(&out.stdout);
    assert_eq!(names, expected(&root, &root.join("specs")));
    // Its twin: the same comparison notices a row too many or too few.
    let mut fewer = names.clone();
    fewer.pop_first();
    assert_ne!(fewer, expected(&root, &root.join("specs")));
    // nextest lists with --format terse, and the ignored ones apart.
    let terse = run(harness(&root).args(["--list", "--format", "terse"]));
    assert_eq!(listed(&terse.stdout), names);
    let ignored = listed(&run(harness(&root).args(["--list", "--ignored"])).stdout);
    assert!(
        ignored.iter().all(|n| !n.ends_with("::granian")),
        "{ignored:?}"
    );
    assert!(names.contains("E19::granian") && !ignored.contains("E19::granian"));
}

#[test]
fn a_new_row_file_is_a_new_trial_with_no_rust_change() {
    let root = root();
    let dir = tempfile::tempdir().unwrap();
    for f in yaml_files(&root.join("specs")) {
        std::fs::copy(&f, dir.path().join(f.file_name().unwrap())).unwrap();
    }
    let e19 = std::fs::read_to_string(root.join("specs/E19.yaml")).unwrap();
    std::fs::write(
        dir.path().join("E99.yaml"),
        e19.replace("id: E19", "id: E99"),
    )
    .unwrap();
    let out = run(harness(&root).arg("--list").env("GATES_SPECS", dir.path()));
    let names = listed(&out.stdout);
    assert!(names.contains("E99::granian"), "{names:?}");
    assert_eq!(names, expected(&root, dir.path()));
    assert_ne!(names, expected(&root, &root.join("specs")));
}

#[test]
fn listing_prepares_nothing_even_on_a_fresh_checkout() {
    // A copy of the project with no .gates/: listing must not create the
    // venv (that would print, and take a minute), yet list the trials the
    // first run will run: servers whose packages are pinned.
    let root = root();
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    copy_dir(&root.join("specs"), &project.join("specs"));
    copy_dir(
        &root.join("fixtures/bareapp"),
        &project.join("fixtures/bareapp"),
    );
    let out = run(harness(project).arg("--list"));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        listed(&out.stdout),
        expected(project, &project.join("specs"))
    );
    assert!(
        !project.join(".gates/venv").exists(),
        "--list prepared a venv"
    );
    assert!(out.stderr.is_empty(), "--list printed: {}", out.stderr);
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            if e.file_name() != "__pycache__" {
                copy_dir(&e.path(), &to.join(e.file_name()));
            }
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn filters_exact_and_skip_work_on_the_list() {
    let root = root();
    let exact = listed(&run(harness(&root).args(["--list", "--exact", "E19::granian"])).stdout);
    assert_eq!(exact, BTreeSet::from(["E19::granian".to_string()]));
    // Without --exact, a filter is a substring.
    let e19 = listed(&run(harness(&root).args(["--list", "E19::"])).stdout);
    assert!(
        e19.len() > 1 && e19.iter().all(|n| n.starts_with("E19::")),
        "{e19:?}"
    );
    let skipped = listed(&run(harness(&root).args(["--list", "--skip", "granian"])).stdout);
    assert!(!skipped.is_empty() && skipped.iter().all(|n| !n.contains("granian")));
    // The twin: --exact with a name that is only a prefix matches nothing.
    let none = run(harness(&root).args(["--list", "--exact", "E19"]));
    assert_eq!(none.stdout, "");
}

#[test]
fn a_bad_setting_is_an_error_naming_the_variable() {
    let out = run(harness(&root())
        .arg("--list")
        .env("GATES_CANNOT_JUDGE", "pass"));
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("GATES_CANNOT_JUDGE"), "{}", out.stderr);
    assert_eq!(out.stdout, "");
}

/// A folder holding one edited copy of specs/E19.yaml, named `id`.
fn e19_variant(id: &str, edits: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut text = std::fs::read_to_string(root().join("specs/E19.yaml")).unwrap();
    for (from, to) in [("id: E19", &*format!("id: {id}"))].iter().chain(edits) {
        assert!(text.contains(from), "specs/E19.yaml no longer has {from:?}");
        text = text.replace(from, to);
    }
    std::fs::write(dir.path().join(format!("{id}.yaml")), text).unwrap();
    dir
}

/// Two trials are enough where the verdict is clear (with room for more
/// when a trial had no free core).
const TWO_TRIALS: (&str, &str) = (
    "trials:\n  min: 5\n  max: 15",
    "trials:\n  min: 2\n  max: 8",
);

#[test]
fn a_failing_row_fails_its_trial_with_the_figure_and_log_tail() {
    let specs = e19_variant("E19one", &[("threads: 2", "threads: 1"), TWO_TRIALS]);
    let out = run(harness(&root())
        .args(["--exact", "E19one::granian"])
        .env("GATES_SPECS", specs.path()));
    assert_eq!(out.code, 101, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("E19one::granian ... FAILED"),
        "{}",
        out.stdout
    );
    // The message: verdict and reason with the releasing figure (the wall
    // ratio, or the scheduler witness's parallelism when the machine had no
    // free core), the key figures, confidence, the table and the log tail.
    assert!(out.stdout.contains("fail: "), "{}", out.stdout);
    assert!(out.stdout.contains("  figures: "), "{}", out.stdout);
    assert!(out.stdout.contains("  confidence: "), "{}", out.stdout);
    assert!(out.stdout.contains("server log tail"), "{}", out.stdout);
    let after = |marker: &str, end: char| {
        out.stdout
            .split(marker)
            .nth(1)
            .and_then(|s| s.split(end).next())
            .and_then(|s| s.trim().parse::<f64>().ok())
    };
    match (after("releasing read ", 'x'), after("(releasing P ", ' ')) {
        (Some(ratio), _) => assert!(
            ratio >= 1.7,
            "one thread serialises the releasing view: {ratio}"
        ),
        (None, Some(p)) => assert!(
            p <= 1.4,
            "one thread runs one request at a time: parallelism {p}"
        ),
        (None, None) => panic!(
            "no releasing figure (`releasing read` or `releasing P`): {}",
            out.stdout
        ),
    }
    assert!(out.stdout.contains("1 failed"), "{}", out.stdout);
}

#[test]
fn the_same_row_with_two_threads_passes_its_trial() {
    let specs = e19_variant("E19two", &[TWO_TRIALS]);
    let out = run(harness(&root())
        .args(["--exact", "E19two::granian"])
        .env("GATES_SPECS", specs.path()));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("E19two::granian ... ok"),
        "{}",
        out.stdout
    );
}

#[test]
fn cannot_judge_fails_by_default_and_is_ignored_on_request() {
    // /busy spins to a deadline: both modes read about 1.0x, the control
    // does not separate, and the gate cannot judge. The row keeps its own
    // trial budget: with two trials, bursty load from outside the machine
    // lock once made the holding control read 1.7x by chance.
    let specs = e19_variant(
        "E19busy",
        &[
            ("path: /work?mode=release", "path: /busy?ms=25"),
            ("path: /work?mode=hold", "path: /busy?ms=26"),
        ],
    );
    let out = run(harness(&root())
        .args(["--exact", "E19busy::granian"])
        .env("GATES_SPECS", specs.path()));
    assert_eq!(out.code, 101, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("cannot judge: "), "{}", out.stdout);
    assert!(
        out.stdout.contains("GATES_CANNOT_JUDGE=ignore"),
        "{}",
        out.stdout
    );
    let out = run(harness(&root())
        .args(["--exact", "E19busy::granian"])
        .env("GATES_SPECS", specs.path())
        .env("GATES_CANNOT_JUDGE", "ignore"));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("E19busy::granian ... ignored (cannot judge: "),
        "{}",
        out.stdout
    );
}

#[test]
fn not_applicable_is_ignored_with_its_reason() {
    // waitress has no worker processes: E15 cannot be expressed on it.
    let out = run(harness(&root()).args(["--exact", "E15::waitress", "--include-ignored"]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("E15::waitress ... ignored (not applicable: "),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("workers"), "{}", out.stdout);
}

#[test]
fn sigint_during_a_gate_stops_its_server_and_exits_130() {
    let specs = e19_variant(
        "E19sig",
        &[(
            "trials:\n  min: 5\n  max: 15",
            "trials:\n  min: 15\n  max: 15",
        )],
    );
    let log = root().join(".gates/logs/E19sig.granian.log");
    let _ = std::fs::remove_file(&log);
    let mut child = StdCommand::new(env!("CARGO_BIN_EXE_gates-harness"))
        .args(["--exact", "E19sig::granian"])
        .current_dir(root())
        .env("GATES_SPECS", specs.path())
        .env_remove("GITHUB_ACTIONS")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait (bounded: other gates may hold the machine) for the server to
    // say which process leads it.
    let started = Instant::now();
    let server_pid = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if let Some(pid) = text
            .split("main PID: ")
            .nth(1)
            .and_then(|s| s.split(')').next())
            .and_then(|s| s.trim().parse::<i32>().ok())
        {
            break pid;
        }
        if started.elapsed() > Duration::from_secs(300) || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            panic!("the gate's server never started:\n{text}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling a child we spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(360) {
            let _ = child.kill();
            panic!("the harness did not exit after SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
    // The server led its own process group; none of it may be left.
    assert!(
        !runner::host::process::group_alive(server_pid),
        "the server's group (pgid {server_pid}) outlived the harness"
    );
}
