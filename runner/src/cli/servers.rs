//! `runner servers [PROFILES]`: each server profile (all of specs/servers/
//! by default), whether it is ready to run here and its version. Starts no
//! server and installs nothing: a missing venv is reported, not created.

use std::path::{Path, PathBuf};

use runner::host::project::Project;
use runner::server::status::{self, ServerStatus};
use runner::spec;
use runner::text::table::Grid;

use super::{unusable, Finish};

pub fn run(project: &Project, python: Option<&Path>, wanted: &[String]) -> Finish {
    let names = if wanted.is_empty() {
        match all_profiles(project) {
            Ok(n) => n,
            Err(e) => return unusable(&e),
        }
    } else {
        wanted.to_vec()
    };
    let mut profiles = Vec::new();
    let mut bad = 0;
    for name in &names {
        match spec::resolve_profile(&project.servers_dir(), name) {
            Ok(p) => profiles.push(p),
            Err(e) => {
                bad += 1;
                eprintln!("error: {e}");
            }
        }
    }
    let venv_python = project.state_dir().join("venv").join("bin").join("python");
    let python: Option<PathBuf> = match python {
        Some(p) => Some(p.to_path_buf()),
        None => venv_python.exists().then_some(venv_python),
    };
    let statuses = status::statuses(&profiles, python.as_deref());
    print!("{}", render(project, &statuses));
    Finish::unusable_if(bad)
}

/// The names of every profile in specs/servers/, sorted.
pub fn all_profiles(project: &Project) -> Result<Vec<String>, String> {
    let files = spec::row_files(&project.servers_dir()).map_err(|e| e.to_string())?;
    Ok(files
        .iter()
        .filter_map(|f| f.file_stem().and_then(|s| s.to_str()).map(String::from))
        .collect())
}

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
