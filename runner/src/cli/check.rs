//! `runner check [FILES]`: validates rows without starting anything: gate
//! rows, and sweep rows (any file in a folder named `sweeps`).

use std::path::PathBuf;

use runner::host::project::Project;
use runner::spec;

use super::{unusable, Finish};

pub fn run(project: &Project, files: &[PathBuf]) -> Finish {
    let files = if files.is_empty() {
        let sweeps = project.specs_dir().join("sweeps");
        match spec::row_files(&project.specs_dir())
            .and_then(|f| Ok([f, runner::sweep::row::files(&sweeps)?].concat()))
        {
            Ok(f) => f,
            Err(e) => return unusable(&e.to_string()),
        }
    } else {
        files.to_vec()
    };
    let mut bad = 0;
    for f in &files {
        let is_sweep = f.parent().and_then(|p| p.file_name()) == Some("sweeps".as_ref());
        let loaded = if is_sweep {
            runner::sweep::row::load(f, &project.app_dir()).map(|r| r.id)
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
