//! `runner check [PATH...]`: validates rows without starting anything. A
//! file is read by its folder: a sweep row in `sweeps/`, a server profile
//! in `servers/`, a gate row anywhere else. A folder is every YAML file in
//! it, and in its `sweeps/` and `servers/` (the layout of specs/); no
//! PATH checks the project's specs/ that way.

use std::path::{Path, PathBuf};

use runner::host::project::Project;
use runner::spec;

use super::{unusable, Finish};

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

pub fn run(project: &Project, paths: &[PathBuf]) -> Finish {
    let specs = [project.specs_dir()];
    let paths = if paths.is_empty() { &specs[..] } else { paths };
    let mut files = Vec::new();
    for p in paths {
        match expand(p) {
            Ok(f) => files.extend(f),
            Err(e) => return unusable(&e),
        }
    }
    let mut bad = 0;
    for f in &files {
        let folder = f.parent().and_then(|p| p.file_name());
        let loaded = if folder == Some("sweeps".as_ref()) {
            runner::sweep::row::load(f, &project.app_dir()).map(|r| r.id)
        } else if folder == Some("servers".as_ref()) {
            spec::profile::load_profile(f).map(|p| format!("server {}", p.name))
        } else {
            runner::spec::row::load_row(f).map(|r| r.id)
        };
        match loaded {
            Ok(id) => println!("ok    {} ({id})", f.display()),
            Err(e) => {
                bad += 1;
                eprintln!("error: {e}");
            }
        }
    }
    Finish::unusable_if(bad)
}
