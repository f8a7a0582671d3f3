//! `runner prepare [--server NAME] [--rows ROWS|all]`: the Python
//! environment, made ready ahead of any gate (with `--server`, only that
//! server's pin); with `--rows`, also the pinned extra packages those rows
//! need (only into the runner's own venv, and saying what it installs).

use std::path::Path;

use runner::host::project::Project;
use runner::host::pyenv;
use runner::host::requires;

use super::{unusable, Finish};

pub fn run(
    project: &Project,
    python: Option<&Path>,
    rows: &[String],
    server: Option<&str>,
) -> Finish {
    let profile = match server.map(|s| runner::spec::resolve_profile(&project.servers_dir(), s)) {
        None => None,
        Some(Ok(p)) => Some(p),
        Some(Err(e)) => return unusable(&e.to_string()),
    };
    let want = match profile.as_ref().map(|p| p.package.as_deref()) {
        None => pyenv::Want::All,
        Some(Some(package)) => pyenv::Want::Package(package),
        // A server that is not a Python package (an external program)
        // needs no pin of its own.
        Some(None) => pyenv::Want::Any,
    };
    let env = match pyenv::prepare_for(project, python, want, &mut |p| eprintln!("{p}")) {
        Ok(env) => env,
        Err(e) => return unusable(&e.to_string()),
    };
    println!("python: {}", env.python.display());
    if !rows.is_empty() {
        if let Err(e) = install_row_requirements(project, python, &env.python, rows) {
            return unusable(&e);
        }
    }
    match pyenv::installed_versions(&env) {
        Ok(lines) => print!("{lines}"),
        Err(e) => return unusable(&e.to_string()),
    }
    Finish::ok()
}

/// Installs what `rows` need and `python` lacks; refuses to touch an
/// interpreter the user named with --python (it prints the command instead).
fn install_row_requirements(
    project: &Project,
    user_python: Option<&Path>,
    python: &Path,
    rows: &[String],
) -> Result<(), String> {
    let rows =
        runner::spec::row::resolve_rows(&project.specs_dir(), rows).map_err(|e| e.to_string())?;
    let pins: Vec<(String, Vec<requires::Requirement>)> = rows
        .iter()
        .map(|row| (row.id.clone(), row.plan.requires()))
        .collect();
    let wanted = requires::gather(pins.iter().map(|(id, r)| (id.as_str(), &r[..])))?;
    let missing = requires::missing(python, &wanted).map_err(|e| e.to_string())?;
    if missing.is_empty() {
        if !wanted.is_empty() {
            let pins: Vec<String> = wanted.iter().map(|r| r.written()).collect();
            println!("row requirements: {} (installed)", pins.join(", "));
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
    eprintln!(
        "installing what the rows need into {}: {}",
        python.display(),
        what.join(", ")
    );
    let log = project.state_dir().join("prepare-rows.log");
    requires::install(python, &pins, &log)
        .map_err(|e| format!("{e} (pip's output: {})", log.display()))?;
    println!("row requirements: {} (installed now)", what.join(", "));
    Ok(())
}
