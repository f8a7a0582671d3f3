//! The commands that read rows and start nothing: `runner list` (the SPEC
//! rows, one a line, then the sweep rows) and `runner check` (every row,
//! sweep row and profile validated).

use std::path::{Path, PathBuf};

use crate::console::Console;
use crate::exit::Finish;
use crate::host::project::Project;
use crate::spec;
use crate::text::table::Grid;

/// `runner list`: id, probe kind and title of each row of specs/, then of
/// each sweep row of specs/sweeps/ (`runner sweep ID`).
pub fn list(project: &Project, console: &dyn Console) -> Result<Finish, String> {
    let mut grid = Grid::new(["id", "kind", "title"]);
    for f in spec::row_files(&project.specs_dir()).map_err(|e| e.to_string())? {
        let row = spec::row::load_row(&f).map_err(|e| e.to_string())?;
        grid.row([row.id, row.probe.name().into(), row.title]);
    }
    let sweeps = project.specs_dir().join("sweeps");
    for f in crate::sweep::row::files(&sweeps).map_err(|e| e.to_string())? {
        let row = crate::sweep::row::load(&f, &project.app_dir()).map_err(|e| e.to_string())?;
        grid.row([row.id, "sweep".into(), row.title]);
    }
    // The lines alone: `runner list` has always printed no header.
    let table = grid.render("");
    for line in table.lines().skip(1) {
        console.print(&format!("{line}\n"));
    }
    Ok(Finish::ok())
}

/// The files a PATH names: itself, or a folder's YAML files (and its
/// `sweeps/` and `servers/` folders'). A folder with none is an error.
fn expand(path: &Path) -> Result<Vec<PathBuf>, String> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = spec::row_files(path).map_err(|e| e.to_string())?;
    for sub in ["sweeps", "servers"] {
        if path.join(sub).is_dir() {
            files.extend(spec::row_files(&path.join(sub)).map_err(|e| e.to_string())?);
        }
    }
    if files.is_empty() {
        return Err(format!(
            "{}: a folder with no .yaml rows, sweep rows or profiles in it",
            path.display()
        ));
    }
    Ok(files)
}

/// `runner check [PATH...]`: validates rows without starting anything. A
/// file is read by its folder: a sweep row in `sweeps/`, a server profile
/// in `servers/`, a gate row anywhere else. A folder is every YAML file in
/// it, and in its `sweeps/` and `servers/` (the layout of specs/); no PATH
/// checks the project's specs/ that way.
pub fn check(
    project: &Project,
    paths: &[PathBuf],
    console: &dyn Console,
) -> Result<Finish, String> {
    let specs = [project.specs_dir()];
    let paths = if paths.is_empty() { &specs[..] } else { paths };
    let mut files = Vec::new();
    for p in paths {
        files.extend(expand(p)?);
    }
    let mut bad = 0;
    for f in &files {
        let folder = f.parent().and_then(|p| p.file_name());
        let loaded = if folder == Some("sweeps".as_ref()) {
            crate::sweep::row::load(f, &project.app_dir()).map(|r| r.id)
        } else if folder == Some("servers".as_ref()) {
            spec::profile::load_profile(f).map(|p| format!("server {}", p.name))
        } else {
            spec::row::load_row(f).map(|r| r.id)
        };
        match loaded {
            Ok(id) => console.print(&format!("ok    {} ({id})\n", f.display())),
            Err(e) => {
                bad += 1;
                console.note(&format!("error: {e}"));
            }
        }
    }
    Ok(Finish::unusable_if(bad))
}
