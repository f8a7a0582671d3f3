//! `runner list`: the SPEC rows, one a line (id, probe kind, title).

use std::io::Write;

use runner::project::Project;
use runner::spec;

use super::{unusable, Finish};

pub fn run(project: &Project) -> Finish {
    let files = match spec::row_files(&project.specs_dir()) {
        Ok(f) => f,
        Err(e) => return unusable(&e.to_string()),
    };
    let mut out = std::io::stdout().lock();
    for f in files {
        match runner::row::load_row(&f) {
            Ok(row) => {
                let _ = writeln!(out, "{:<6} {:<20} {}", row.id, row.probe.name(), row.title);
            }
            Err(e) => return unusable(&e.to_string()),
        }
    }
    Finish::ok()
}
