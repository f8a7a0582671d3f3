//! What running every row needs, made ready once: the runner's venv with
//! the pinned servers and every row's `requires:` (numpy, python-libzim, the
//! model packages). `runner prepare --rows` installs the rows' packages when
//! asked; a suite (`cargo test --workspace`, the gates harness) calls
//! [`every_row`] before its first gate, so a fresh clone needs no step of
//! its own.
//!
//! Test binaries and their threads start at once (nextest runs every test in
//! a process of its own), so [`every_row`] holds an exclusive `flock` on
//! `.gates/setup.lock` while it looks and installs: one process prepares,
//! the others wait and then find a stamp. A stamp (in the venv, so that a
//! rebuilt venv loses it) is named by a hash of the servers' pins and the
//! rows' pins; finding one costs no Python start.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;

use fs4::FileExt;
use sha2::{Digest, Sha256};

use crate::console::Console;
use crate::exit::Finish;
use crate::host::project::Project;
use crate::host::pyenv::{self, Want};
use crate::host::requires::{self, Missing, Requirement};
use crate::spec::row::Row;

/// The pins `rows` need, one list for one venv (an error names two rows
/// that pin one package at two versions).
pub fn wanted(rows: &[Row]) -> Result<Vec<Requirement>, String> {
    let pins: Vec<(String, Vec<Requirement>)> = rows
        .iter()
        .map(|row| (row.id.clone(), row.plan.requires()))
        .collect();
    requires::gather(pins.iter().map(|(id, r)| (id.as_str(), &r[..])))
}

/// The pins of `wanted` that `python` lacks (or has at another version).
pub fn missing(python: &Path, wanted: &[Requirement]) -> Result<Vec<Missing>, String> {
    requires::missing(python, wanted).map_err(|e| e.to_string())
}

/// Installs `pins` into the runner's own venv (`python`), pip's output
/// appended to `.gates/prepare-rows.log`.
pub fn install(project: &Project, python: &Path, pins: &[Requirement]) -> Result<(), String> {
    let log = rows_log(project);
    requires::install(python, pins, &log)
        .map_err(|e| format!("{e} (pip's output: {})", log.display()))
}

/// Where pip's output from installing rows' packages goes.
fn rows_log(project: &Project) -> PathBuf {
    project.state_dir().join("prepare-rows.log")
}

/// The runner's venv with the servers' pins (`want`) and every pin `rows`
/// need, prepared under `.gates/setup.lock` if it is not ready yet. `say`
/// gets one line, only when something is installed.
pub fn every_row(
    project: &Project,
    want: Want<'_>,
    rows: &[Row],
    say: &mut dyn FnMut(&str),
) -> Result<PathBuf, String> {
    let state = project.state_dir();
    std::fs::create_dir_all(&state).map_err(|e| format!("{}: {e}", state.display()))?;
    let lock_path = state.join("setup.lock");
    let lock = File::create(&lock_path).map_err(|e| format!("{}: {e}", lock_path.display()))?;
    // Released when `lock` drops (or the process dies). Blocking: whoever
    // holds it is installing, and each of its steps is bounded. (fs4's, not
    // std's `File::lock`: newer than 1.85.)
    FileExt::lock(&lock).map_err(|e| format!("{}: {e}", lock_path.display()))?;

    let wanted = wanted(rows)?;
    let requirements = project.servers_dir().join("requirements.txt");
    let pins =
        std::fs::read(&requirements).map_err(|e| format!("{}: {e}", requirements.display()))?;
    let key = stamp_key(&pins, want, &wanted);
    let venv = state.join("venv");
    let python = venv.join("bin").join("python");
    // One stamp per set of pins asked for: a harness run on other rows
    // (GATES_SPECS) leaves the suite's stamp in place.
    let stamp = venv.join(format!(".gates-ready-{}", &key[..16]));
    if python.exists() && stamp.exists() {
        return Ok(python);
    }
    let started = Instant::now();
    let logs = format!(
        "{} and {}",
        project.logs_dir().join("pip.log").display(),
        rows_log(project).display()
    );
    let mut said = false;
    let every: Vec<String> = wanted.iter().map(Requirement::written).collect();
    let what = match every.len() {
        0 => "the pinned servers".to_string(),
        _ => format!("the pinned servers and {}", every.join(", ")),
    };
    let mut announce = |say: &mut dyn FnMut(&str), why: &str| {
        if !said {
            said = true;
            say(&pyenv::EnvProgress::InstallingForRows {
                venv: venv.clone(),
                what: what.clone(),
                logs: logs.clone(),
                reason: why.to_string(),
            }
            .to_string());
        }
    };
    let env = pyenv::prepare_for(project, None, want, &mut |p| {
        if let pyenv::EnvProgress::Installing { reason, .. } = p {
            announce(say, &reason);
        }
    })
    .map_err(|e| e.to_string())?;
    let lacking = missing(&env.python, &wanted)?;
    if !lacking.is_empty() {
        let what: Vec<String> = lacking.iter().map(|m| m.to_string()).collect();
        announce(say, &format!("missing: {}", what.join(", ")));
        let pins: Vec<Requirement> = lacking.into_iter().map(|m| m.requirement).collect();
        install(project, &env.python, &pins)?;
    }
    let announced = said;
    std::fs::write(&stamp, every.join("\n") + "\n")
        .map_err(|e| format!("{}: {e}", stamp.display()))?;
    if announced {
        say(&format!(
            "{} ready in {:.0} s",
            venv.display(),
            started.elapsed().as_secs_f64()
        ));
    }
    Ok(env.python)
}

/// What a ready venv was prepared from, hashed (hex).
fn stamp_key(server_pins: &[u8], want: Want<'_>, wanted: &[Requirement]) -> String {
    let mut hash = Sha256::new();
    hash.update(server_pins);
    hash.update(format!("{want:?}\n"));
    for r in wanted {
        hash.update(format!("{}\n", r.written()));
    }
    format!("{:x}", hash.finalize())
}

/// `runner prepare [--server NAME] [--rows ROWS|all]`: the Python
/// environment, made ready ahead of any gate (with a `server`, only that
/// server's pin); with `rows`, also the pinned extra packages those rows
/// need (only into the runner's own venv, and saying what it installs).
pub fn prepare(
    project: &Project,
    python: Option<&Path>,
    rows: &[String],
    server: Option<&str>,
    console: &dyn Console,
) -> Result<Finish, String> {
    let profile = server
        .map(|s| crate::spec::resolve_profile(&project.servers_dir(), s))
        .transpose()
        .map_err(|e| e.to_string())?;
    let want = match profile.as_ref().map(|p| p.package.as_deref()) {
        None => Want::All,
        Some(Some(package)) => Want::Package(package),
        // A server that is not a Python package (an external program)
        // needs no pin of its own.
        Some(None) => Want::Any,
    };
    let env = pyenv::prepare_for(project, python, want, &mut |p| console.note(&p.to_string()))
        .map_err(|e| e.to_string())?;
    console.print(&format!("python: {}\n", env.python.display()));
    if !rows.is_empty() {
        install_row_requirements(project, python, &env.python, rows, console)?;
    }
    console.print(&pyenv::installed_versions(&env).map_err(|e| e.to_string())?);
    Ok(Finish::ok())
}

/// Installs what `rows` need and `python` lacks; refuses to touch an
/// interpreter the user named with --python (it prints the command instead).
fn install_row_requirements(
    project: &Project,
    user_python: Option<&Path>,
    python: &Path,
    rows: &[String],
    console: &dyn Console,
) -> Result<(), String> {
    let rows =
        crate::spec::row::resolve_rows(&project.specs_dir(), rows).map_err(|e| e.to_string())?;
    let wanted = wanted(&rows)?;
    let missing = missing(python, &wanted)?;
    if missing.is_empty() {
        if !wanted.is_empty() {
            let pins: Vec<String> = wanted.iter().map(|r| r.written()).collect();
            console.print(&format!(
                "row requirements: {} (installed)\n",
                pins.join(", ")
            ));
        }
        return Ok(());
    }
    let pins: Vec<_> = missing.iter().map(|m| m.requirement.clone()).collect();
    if user_python.is_some() {
        return Err(format!(
            "the rows need packages {} lacks, and --python names your interpreter, which the runner does \
             not change: {}",
            python.display(),
            requires::install_command(python, &pins)
        ));
    }
    let what: Vec<String> = pins.iter().map(|r| r.written()).collect();
    console.note(&format!(
        "installing what the rows need into {}: {}",
        python.display(),
        what.join(", ")
    ));
    install(project, python, &pins)?;
    console.print(&format!(
        "row requirements: {} (installed now)\n",
        what.join(", ")
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pin(text: &str) -> Requirement {
        Requirement::parse(text).unwrap()
    }

    #[test]
    fn the_stamp_changes_with_any_pin_and_only_then() {
        let servers = b"granian==2.8.9\n";
        let rows = [pin("numpy==2.3.5"), pin("libzim==3.13.1")];
        let key = stamp_key(servers, Want::All, &rows);
        assert_eq!(key, stamp_key(servers, Want::All, &rows));
        // Its twins: a row's pin, a server's pin, or the servers wanted.
        let bumped = [pin("numpy==2.3.6"), pin("libzim==3.13.1")];
        assert_ne!(key, stamp_key(servers, Want::All, &bumped));
        assert_ne!(key, stamp_key(b"granian==2.9.0\n", Want::All, &rows));
        assert_ne!(key, stamp_key(servers, Want::Any, &rows));
    }
}
