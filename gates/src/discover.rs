//! Which trials exist: every row file (specs/*.yaml, or `GATES_SPECS`)
//! times every server profile (specs/servers/*.yaml) installed here, named
//! `ROW::SERVER`. Built at run time, so a new row file or profile needs no
//! Rust change. Nothing here prints or prepares anything: `--list` must
//! show the trials and nothing else, and must not install Python packages.
//!
//! "Installed" is `runner servers`' "ready" (`runner::server::status`): the
//! profile's program is found, or its package is in the runner's venv. With
//! no venv yet (a fresh checkout), a packaged profile counts as installed
//! when specs/servers/requirements.txt pins it, because the first trial to
//! run prepares the venv from those pins; listing and running see the same
//! trials either way.

use std::path::{Path, PathBuf};

use runner::host::project::Project;
use runner::server::status;
use runner::spec::row::Row;
use runner::spec::{self, Profile};

use crate::config::Config;

/// One trial to be: a row on a server.
#[derive(Debug)]
pub struct Planned {
    /// `E19::granian`.
    pub name: String,
    pub server: String,
    /// The row, or why its file cannot be used (the trial fails with it).
    pub row: Result<Row, String>,
    /// The profile, or why its file cannot be used.
    pub profile: Result<Profile, String>,
    /// Listed but not run unless asked for (`--ignored`).
    pub ignored: bool,
}

/// The interpreter the runner prepares (`runner prepare`), if it exists.
pub fn venv_python(project: &Project) -> Option<PathBuf> {
    let python = project.state_dir().join("venv").join("bin").join("python");
    python.exists().then_some(python)
}

/// Every trial, rows in file order, servers in file order within a row.
pub fn discover(project: &Project, config: &Config) -> Result<Vec<Planned>, String> {
    let specs = config.specs.clone().unwrap_or_else(|| project.specs_dir());
    let row_files = spec::row_files(&specs).map_err(|e| {
        format!(
            "{e} (rows come from {}; set {} to another folder of row files)",
            specs.display(),
            crate::config::SPECS_VAR
        )
    })?;
    let profile_files = spec::row_files(&project.servers_dir()).map_err(|e| e.to_string())?;
    let loaded: Vec<(String, Result<Profile, String>)> = profile_files
        .iter()
        .map(|f| (stem(f), spec::load_profile(f).map_err(|e| e.to_string())))
        .collect();
    let good: Vec<Profile> = loaded
        .iter()
        .filter_map(|(_, p)| p.as_ref().ok().cloned())
        .collect();
    let ready = installed(project, &good);
    // Profiles that load and are installed, plus profiles that do not load
    // at all: a broken profile is a failing trial, never a missing one.
    let mut servers: Vec<(String, Result<Profile, String>)> = Vec::new();
    for (name, profile) in loaded {
        match profile {
            Ok(p) => {
                if ready.iter().any(|(n, r)| *n == p.name && *r) {
                    servers.push((p.name.clone(), Ok(p)));
                }
            }
            Err(e) => servers.push((name, Err(e))),
        }
    }
    let mut planned = Vec::new();
    for file in &row_files {
        let row = runner::spec::row::load_row(file).map_err(|e| e.to_string());
        let id = row.as_ref().map_or_else(|_| stem(file), |r| r.id.clone());
        if let Ok(r) = &row {
            if r.servers().is_empty() {
                // A probe of a Python call alone (gil-probe): one trial,
                // `ROW::python`, in the runner's interpreter; the profile is
                // never started.
                let profile = servers
                    .iter()
                    .find_map(|(_, p)| p.as_ref().ok().cloned())
                    .ok_or_else(|| "no server profile loads".to_string());
                planned.push(Planned {
                    name: format!("{id}::{}", runner::gate::NO_SERVER),
                    server: runner::gate::NO_SERVER.into(),
                    row: row.clone(),
                    profile,
                    ignored: false,
                });
                continue;
            }
        }
        for (server, profile) in &servers {
            let broken = row.is_err() || profile.is_err();
            planned.push(Planned {
                name: format!("{id}::{server}"),
                server: server.clone(),
                row: row.clone(),
                profile: profile.clone(),
                ignored: !broken && !config.servers.runs_by_default(server),
            });
        }
    }
    Ok(planned)
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `(profile name, installed here)` for each of `profiles`.
pub fn installed(project: &Project, profiles: &[Profile]) -> Vec<(String, bool)> {
    match venv_python(project) {
        Some(python) => status::statuses(profiles, Some(&python))
            .into_iter()
            .map(|s| (s.name, s.ready))
            .collect(),
        None => {
            let pins = std::fs::read_to_string(project.servers_dir().join("requirements.txt"))
                .map(|t| pinned(&t))
                .unwrap_or_default();
            profiles
                .iter()
                .map(|p| {
                    let ready = match &p.package {
                        Some(package) => {
                            p.not_ready().is_none() && pins.contains(&normalise(package))
                        }
                        None => status::statuses(std::slice::from_ref(p), None)
                            .first()
                            .is_some_and(|s| s.ready),
                    };
                    (p.name.clone(), ready)
                })
                .collect()
        }
    }
}

/// The distribution names a requirements file pins, normalised (PEP 503).
pub fn pinned(requirements: &str) -> Vec<String> {
    requirements
        .lines()
        .map(|l| l.split('#').next().unwrap_or_default().trim())
        .filter(|l| !l.is_empty() && !l.starts_with('-'))
        .map(|l| {
            let end = l
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'))
                .unwrap_or(l.len());
            normalise(&l[..end])
        })
        .filter(|n| !n.is_empty())
        .collect()
}

fn normalise(name: &str) -> String {
    name.to_ascii_lowercase().replace(['_', '.'], "-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_are_read_by_distribution_name() {
        let text = "# servers\ngranian==2.8.9\nPyUWSGI == 2.0.30.post1 ; sys_platform != 'win32'\n\
                    -r other.txt\nwaitress[extra]>=3\nzope.interface==6  # dotted\n";
        assert_eq!(
            pinned(text),
            vec!["granian", "pyuwsgi", "waitress", "zope-interface"]
        );
        assert!(!pinned("gunicorn==1\n").contains(&"granian".to_string()));
    }
}
