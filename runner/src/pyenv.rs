//! The Python side: a virtualenv under `.gates/venv` with the pinned servers
//! from `specs/servers/requirements.txt`, prepared on first use and rebuilt
//! when the pins change or its interpreter is gone.
//!
//! A stamp file records a hash of the requirements; a matching stamp and a
//! working `python` link mean reuse. A file lock serialises preparation,
//! because `cargo test` starts many runners at once and two pip installs into
//! one folder corrupt it. Every step is bounded in time.

use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::project::Project;

/// How long one `pip install` may take before we give up.
const PIP_TIMEOUT: Duration = Duration::from_secs(600);
/// How long a quick interpreter query may take.
const QUERY_TIMEOUT: Duration = Duration::from_secs(30);

/// What preparing the environment reports as it goes.
#[derive(Debug, Clone)]
pub enum EnvProgress {
    /// Creating the venv and installing the pins (first use or changed pins).
    Installing {
        venv: PathBuf,
        requirements: PathBuf,
        reason: String,
    },
    Installed {
        elapsed: Duration,
    },
}

/// Why there is no usable interpreter.
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    #[error("no python3 found on PATH; install Python 3.9 or newer, or pass --python PATH to an interpreter that has the server installed")]
    NoPython,
    #[error("{python}: {problem}")]
    BadPython { python: String, problem: String },
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

/// The venv interpreter, preparing it if needed; or `explicit` as it is.
pub fn prepare(
    project: &Project,
    explicit: Option<&Path>,
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
    // SAFETY: flock on a file descriptor we own; released when `lock` drops.
    unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) };

    let venv = state.join("venv");
    let python = venv.join("bin").join("python");
    let requirements = project.servers_dir().join("requirements.txt");
    let pins = std::fs::read(&requirements).map_err(|e| io(&requirements, e))?;
    let base = base_python()?;
    // The stamp is the pins' hash. An interpreter that moved or was
    // upgraded away leaves the venv's `python` link dangling, which the
    // `exists()` below notices; we do not run Python for this check, as it
    // happens before every gate.
    let stamp_text = format!("{:x}\n", Sha256::digest(&pins));
    let stamp = venv.join(".gates-stamp");
    let reason = match std::fs::read_to_string(&stamp) {
        _ if !python.exists() && venv.exists() => "its interpreter is gone",
        Ok(existing) if existing == stamp_text && python.exists() => {
            return Ok(PythonEnv { python })
        }
        Ok(_) => "the pins changed",
        Err(_) if python.exists() => "no stamp from an earlier install",
        Err(_) => "first use",
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
    run_logged(
        Command::new(&base)
            .args(["-m", "venv", "--clear"])
            .arg(&venv),
        "python3 -m venv",
        &log,
        &requirements,
    )?;
    run_logged(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--no-input",
                "-r",
            ])
            .arg(&requirements),
        "pip install",
        &log,
        &requirements,
    )?;
    let mut f = File::create(&stamp).map_err(|e| io(&stamp, e))?;
    f.write_all(stamp_text.as_bytes())
        .map_err(|e| io(&stamp, e))?;
    progress(EnvProgress::Installed {
        elapsed: started.elapsed(),
    });
    Ok(PythonEnv { python })
}

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
    let mut child = Command::new(python)
        .args(["-c", code])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            bad(format!(
                "cannot run it ({e}); pass --python PATH to a working interpreter"
            ))
        })?;
    let status = wait_bounded(&mut child, QUERY_TIMEOUT).map_err(|e| bad(e.to_string()))?;
    let out = child.wait_with_output().map_err(|e| bad(e.to_string()))?;
    match status {
        Some(s) if s.success() => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        Some(s) => Err(bad(format!(
            "{s}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
        None => Err(bad(format!(
            "did not answer within {} s",
            QUERY_TIMEOUT.as_secs()
        ))),
    }
}

fn run_logged(
    command: &mut Command,
    step: &str,
    log: &Path,
    requirements: &Path,
) -> Result<(), EnvError> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| io(log, e))?;
    let err_file = file.try_clone().map_err(|e| io(log, e))?;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err_file)
        .spawn()
        .map_err(|e| io(log, e))?;
    let status = wait_bounded(&mut child, PIP_TIMEOUT).map_err(|e| io(log, e))?;
    match status {
        Some(s) if s.success() => Ok(()),
        other => {
            if other.is_none() {
                let _ = child.kill();
                let _ = child.wait();
            }
            Err(EnvError::InstallFailed {
                step: step.into(),
                status: other.map_or(format!("no end within {} s", PIP_TIMEOUT.as_secs()), |s| {
                    s.to_string()
                }),
                log: log.display().to_string(),
                requirements: requirements.display().to_string(),
                tail: crate::logtail::tail(log, 20),
            })
        }
    }
}

/// Waits up to `limit` for `child`; None if it is still running.
fn wait_bounded(
    child: &mut std::process::Child,
    limit: Duration,
) -> std::io::Result<Option<std::process::ExitStatus>> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn io(path: &Path, source: std::io::Error) -> EnvError {
    EnvError::Io {
        path: path.display().to_string(),
        source,
    }
}
