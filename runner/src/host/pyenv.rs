//! The Python side: a virtualenv in the state folder (`.gates/venv` in a
//! checkout, `~/.cache/concurrency-gates/venv` for an installed runner) with
//! the pinned servers from `specs/servers/requirements.txt`, prepared on
//! first use and rebuilt when the pins change or its interpreter is gone.
//!
//! A stamp file records a hash of the requirements; a matching stamp and a
//! working `python` link mean reuse. A file lock serialises preparation,
//! because `cargo test` starts many runners at once and two pip installs into
//! one folder corrupt it. Every step is bounded in time.
//!
//! `prepare --server S` (a CI job that checks one server) installs only
//! that server's pin; the stamp says so (`HASH only PACKAGE`), gates accept
//! such a venv (the other servers are not ready), and a plain `prepare`
//! rebuilds it whole.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use fs4::FileExt;
use sha2::{Digest, Sha256};

use crate::host::bounded::{self, CommandBounds, Ending};
use crate::host::project::Project;

/// How long one `pip install` may take before we give up.
const PIP_TIMEOUT: Duration = Duration::from_secs(600);
/// How long a quick interpreter query may take.
const QUERY_TIMEOUT: Duration = Duration::from_secs(30);
/// What of each stream of a set-up step reaches pip.log.
const PIP_OUTPUT_CAP: usize = 8 << 20;

/// What preparing the environment reports as it goes.
#[derive(Debug, Clone)]
pub enum EnvProgress {
    /// Creating the venv and installing the pins (first use or changed pins).
    Installing {
        venv: PathBuf,
        requirements: PathBuf,
        reason: String,
    },
    /// The suite's every-row venv (`prepare --rows all`): the servers and
    /// every row's libraries, said once before pip starts.
    InstallingForRows {
        venv: PathBuf,
        /// What goes in: "the pinned servers and numpy==2.1.3, ...".
        what: String,
        /// Where pip's output goes.
        logs: String,
        reason: String,
    },
    Installed {
        elapsed: Duration,
    },
}

/// The one wording of the environment's progress, for every reporter.
impl std::fmt::Display for EnvProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EnvProgress::Installing {
                venv,
                requirements,
                reason,
            } => write!(
                f,
                "preparing the Python environment ({reason}): creating {} and installing {} \
                 (this takes a minute once; --python PATH uses an interpreter of yours instead)",
                venv.display(),
                requirements.display()
            ),
            EnvProgress::InstallingForRows {
                venv,
                what,
                logs,
                reason,
            } => write!(
                f,
                "preparing the Python environment for every row ({reason}): creating {} and \
                 installing {what} (once, a few minutes; pip's output: {logs})",
                venv.display()
            ),
            EnvProgress::Installed { elapsed } => write!(
                f,
                "Python environment ready in {:.1} s",
                elapsed.as_secs_f64()
            ),
        }
    }
}

/// Why there is no usable interpreter.
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    #[error("no python3 found on PATH; install Python 3.9 or newer, or pass --python PATH to an interpreter that has the server installed")]
    NoPython,
    #[error("{python}: {problem}")]
    BadPython { python: String, problem: String },
    #[error("{requirements} pins no {package}; add `{package}==VERSION` to it (--server names a profile whose package it is)")]
    NotPinned {
        requirements: String,
        package: String,
    },
    #[error("{step} failed ({status}); see {log} (last lines below), fix the pins in {requirements} or pass --python\n{tail}")]
    InstallFailed {
        step: String,
        status: String,
        log: String,
        requirements: String,
        tail: String,
    },
    #[error("cannot prepare {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// A ready interpreter.
#[derive(Debug, Clone)]
pub struct PythonEnv {
    pub python: PathBuf,
}

/// Which pins a venv must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want<'a> {
    /// A venv from these pins, whole or for one server (what gates need:
    /// a server not installed is not ready).
    Any,
    /// Every pin (`runner prepare`).
    All,
    /// This package's pin at least (`runner prepare --server`).
    Package(&'a str),
}

/// The venv interpreter, preparing it if needed; or `explicit` as it is.
pub fn prepare(
    project: &Project,
    explicit: Option<&Path>,
    progress: &mut dyn FnMut(EnvProgress),
) -> Result<PythonEnv, EnvError> {
    prepare_for(project, explicit, Want::Any, progress)
}

/// The pins of `requirements` (its text) naming `package`, case and `-`/`_`
/// aside: the line `package==VERSION`.
pub fn pin_of(requirements: &str, package: &str) -> Option<String> {
    let norm = |s: &str| s.trim().to_lowercase().replace('_', "-");
    requirements
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .find(|l| {
            let name = l
                .split(['=', '<', '>', '!', '~', '[', ';', ' '])
                .next()
                .unwrap_or("");
            norm(name) == norm(package)
        })
        .map(String::from)
}

/// [`prepare`], with the pins `want` needs.
pub fn prepare_for(
    project: &Project,
    explicit: Option<&Path>,
    want: Want<'_>,
    progress: &mut dyn FnMut(EnvProgress),
) -> Result<PythonEnv, EnvError> {
    if let Some(python) = explicit {
        query(python, "import sys; print(sys.version_info[:2] >= (3, 9))").and_then(|out| {
            if out.trim() == "True" {
                Ok(())
            } else {
                Err(EnvError::BadPython {
                    python: python.display().to_string(),
                    problem: "is older than Python 3.9".into(),
                })
            }
        })?;
        return Ok(PythonEnv {
            python: python.to_path_buf(),
        });
    }
    let state = project.state_dir();
    std::fs::create_dir_all(&state).map_err(|e| io(&state, e))?;
    let lock_path = state.join("venv.lock");
    let lock = File::create(&lock_path).map_err(|e| io(&lock_path, e))?;
    // Released when `lock` drops. (fs4's, not std's `File::lock`: newer than 1.85.)
    FileExt::lock(&lock).map_err(|e| io(&lock_path, e))?;

    let venv = state.join("venv");
    let python = venv.join("bin").join("python");
    let requirements = project.servers_dir().join("requirements.txt");
    let pins = std::fs::read(&requirements).map_err(|e| io(&requirements, e))?;
    let base = base_python()?;
    // The stamp is the pins' hash. An interpreter that moved or was
    // upgraded away leaves the venv's `python` link dangling, which the
    // `exists()` below notices; we do not run Python for this check, as it
    // happens before every gate.
    let hash = format!("{:x}", Sha256::digest(&pins));
    let stamp_text = match want {
        Want::Package(p) => format!("{hash} only {p}\n"),
        Want::Any | Want::All => format!("{hash}\n"),
    };
    let stamp = venv.join(".gates-stamp");
    let reason = match std::fs::read_to_string(&stamp) {
        _ if !python.exists() && venv.exists() => "its interpreter is gone",
        Ok(existing) if python.exists() && existing == format!("{hash}\n") => {
            // Every pin: enough for any want.
            return Ok(PythonEnv { python });
        }
        Ok(existing) if python.exists() && existing.starts_with(&format!("{hash} only ")) => {
            match want {
                Want::Any => return Ok(PythonEnv { python }),
                Want::Package(_) if existing == stamp_text => return Ok(PythonEnv { python }),
                _ => "it holds one server's pin only (`prepare --server`)",
            }
        }
        Ok(_) => "the pins changed",
        Err(_) if python.exists() => "no stamp from an earlier install",
        Err(_) => "first use",
    };
    // One server's pin: a requirements file of that line alone, with the
    // runner's own pins (anyio, which its ASGI wrapper sizes), the whole
    // file as constraints so that their dependencies install as pinned.
    let all_pins = requirements.clone();
    let requirements = match want {
        Want::Package(package) => {
            let text = String::from_utf8_lossy(&pins);
            let line = pin_of(&text, package).ok_or_else(|| EnvError::NotPinned {
                requirements: requirements.display().to_string(),
                package: package.to_string(),
            })?;
            let mut lines = vec![line];
            lines.extend(RUNNER_PINS.iter().filter_map(|p| pin_of(&text, p)));
            let only = state.join(format!("requirements-{package}.txt"));
            std::fs::write(&only, lines.join("\n") + "\n").map_err(|e| io(&only, e))?;
            only
        }
        Want::Any | Want::All => requirements,
    };
    progress(EnvProgress::Installing {
        venv: venv.clone(),
        requirements: requirements.clone(),
        reason: reason.into(),
    });
    let started = Instant::now();
    let logs = project.logs_dir();
    std::fs::create_dir_all(&logs).map_err(|e| io(&logs, e))?;
    let log = logs.join("pip.log");
    let _ = std::fs::remove_file(&stamp);
    let mut make_venv = Command::new(&base);
    make_venv.args(["-m", "venv", "--clear"]).arg(&venv);
    run_logged(make_venv, "python3 -m venv", &log, &requirements)?;
    let mut pip = Command::new(&python);
    pip.args([
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-input",
        "-c",
    ])
    .arg(&all_pins)
    .arg("-r")
    .arg(&requirements);
    run_logged(pip, "pip install", &log, &requirements)?;
    let mut f = File::create(&stamp).map_err(|e| io(&stamp, e))?;
    f.write_all(stamp_text.as_bytes())
        .map_err(|e| io(&stamp, e))?;
    progress(EnvProgress::Installed {
        elapsed: started.elapsed(),
    });
    Ok(PythonEnv { python })
}

/// Packages the runner itself needs in the venv whatever the server: anyio,
/// whose default thread limiter the ASGI wrapper sets.
pub const RUNNER_PINS: &[&str] = &["anyio"];

/// `NAME VERSION` lines for the Python version and each pinned server.
pub fn installed_versions(env: &PythonEnv) -> Result<String, EnvError> {
    query(
        &env.python,
        "import sys, importlib.metadata as m\n\
         print('python', sys.version.split()[0])\n\
         for n in ('granian', 'gunicorn', 'waitress', 'pyuwsgi'):\n\
         \ttry: print(n, m.version(n))\n\
         \texcept m.PackageNotFoundError: print(n, 'not installed')",
    )
}

/// `$GATES_PYTHON`, else python3 on PATH.
fn base_python() -> Result<PathBuf, EnvError> {
    if let Some(p) = std::env::var_os("GATES_PYTHON") {
        return Ok(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").ok_or(EnvError::NoPython)?;
    std::env::split_paths(&path)
        .map(|d| d.join("python3"))
        .find(|p| p.is_file())
        .ok_or(EnvError::NoPython)
}

/// Runs `python -c code` and returns its stdout.
pub fn query(python: &Path, code: &str) -> Result<String, EnvError> {
    let bad = |problem: String| EnvError::BadPython {
        python: python.display().to_string(),
        problem,
    };
    let mut command = Command::new(python);
    command.args(["-c", code]);
    let finished =
        bounded::run_blocking(command, CommandBounds::new(QUERY_TIMEOUT)).map_err(|e| {
            bad(format!(
                "cannot run it ({e}); pass --python PATH to a working interpreter"
            ))
        })?;
    match finished.ending {
        Ending::Exited(s) if s.success() => Ok(finished.stdout_text().into_owned()),
        Ending::Exited(s) => Err(bad(format!("{s}: {}", finished.stderr_text().trim()))),
        Ending::TimedOut(_) => Err(bad(format!(
            "did not answer within {} s",
            QUERY_TIMEOUT.as_secs()
        ))),
    }
}

/// Runs one set-up step (`python -m venv`, `pip install`) within
/// [`PIP_TIMEOUT`], appending what it printed to `log`.
fn run_logged(
    command: Command,
    step: &str,
    log: &Path,
    requirements: &Path,
) -> Result<(), EnvError> {
    let finished = bounded::run_blocking(
        command,
        CommandBounds::new(PIP_TIMEOUT).with_cap(PIP_OUTPUT_CAP),
    )
    .map_err(|e| io(log, e))?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| io(log, e))?;
    // stdout, then stderr (where pip puts its errors), so the tail below
    // ends with the error.
    file.write_all(&finished.stdout)
        .and_then(|()| file.write_all(&finished.stderr))
        .and_then(|()| match finished.dropped_bytes {
            0 => Ok(()),
            n => writeln!(file, "[runner: {n} more bytes of output not kept]"),
        })
        .map_err(|e| io(log, e))?;
    drop(file);
    let status = match finished.ending {
        Ending::Exited(s) if s.success() => return Ok(()),
        Ending::Exited(s) => s.to_string(),
        Ending::TimedOut(_) => format!("no end within {} s", PIP_TIMEOUT.as_secs()),
    };
    Err(EnvError::InstallFailed {
        step: step.into(),
        status,
        log: log.display().to_string(),
        requirements: requirements.display().to_string(),
        tail: crate::host::logtail::tail(log, 20),
    })
}

fn io(path: &Path, source: std::io::Error) -> EnvError {
    EnvError::Io {
        path: path.display().to_string(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_servers_pin_is_found_by_its_package_name_and_no_other() {
        let req = "# servers\ngranian==2.8.9\ngunicorn==27.0.1\nPyUWSGI==2.0.30.post1\nzope_interface>=5\n";
        assert_eq!(pin_of(req, "gunicorn").as_deref(), Some("gunicorn==27.0.1"));
        assert_eq!(
            pin_of(req, "pyuwsgi").as_deref(),
            Some("PyUWSGI==2.0.30.post1")
        );
        assert_eq!(
            pin_of(req, "zope-interface").as_deref(),
            Some("zope_interface>=5")
        );
        // The twin: a prefix of a name, or a comment, is not a pin.
        assert_eq!(pin_of(req, "gunicor"), None);
        assert_eq!(pin_of(req, "servers"), None);
    }

    #[test]
    fn a_query_returns_stdout_or_the_status_and_stderr() {
        let python = base_python().unwrap();
        assert_eq!(query(&python, "print(6 * 7)").unwrap(), "42\n");
        let e = query(&python, "import sys; sys.exit('no such module: boom')")
            .unwrap_err()
            .to_string();
        assert!(e.contains("exit status: 1"), "{e}");
        assert!(e.contains("no such module: boom"), "{e}");
    }

    #[test]
    fn a_failed_step_leaves_its_output_in_the_log_and_its_tail_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("pip.log");
        std::fs::write(&log, "earlier step\n").unwrap();
        let mut ok = Command::new("sh");
        ok.args(["-c", "echo collected"]);
        run_logged(ok, "ok step", &log, Path::new("reqs.txt")).unwrap();
        let mut bad = Command::new("sh");
        bad.args([
            "-c",
            "echo downloading; echo 'ERROR: no matching distribution' >&2; exit 1",
        ]);
        let e = run_logged(bad, "pip install", &log, Path::new("reqs.txt")).unwrap_err();
        let text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(
            text,
            "earlier step\ncollected\ndownloading\nERROR: no matching distribution\n"
        );
        let EnvError::InstallFailed {
            step, status, tail, ..
        } = e
        else {
            panic!("{e}")
        };
        assert_eq!(step, "pip install");
        assert_eq!(status, "exit status: 1");
        assert!(tail.contains("ERROR: no matching distribution"), "{tail}");
    }
}
