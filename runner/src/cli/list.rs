//! `runner list`: the SPEC rows, one a line (id, probe kind, title), then
//! the sweep rows of specs/sweeps/ (`runner sweep ID`).

use std::io::Write;

use runner::host::project::Project;
use runner::spec;

use super::{unusable, Finish};

pub fn run(project: &Project) -> Finish {
    let mut lines: Vec<[String; 3]> = Vec::new();
    let files = match spec::row_files(&project.specs_dir()) {
        Ok(f) => f,
        Err(e) => return unusable(&e.to_string()),
    };
    for f in files {
        match runner::spec::row::load_row(&f) {
            Ok(row) => lines.push([row.id, row.probe.name().into(), row.title]),
            Err(e) => return unusable(&e.to_string()),
        }
    }
    let sweeps = project.specs_dir().join("sweeps");
    let files = match runner::sweep::row::files(&sweeps) {
        Ok(f) => f,
        Err(e) => return unusable(&e.to_string()),
    };
    for f in files {
        match runner::sweep::row::load(&f, &project.app_dir()) {
            Ok(row) => lines.push([row.id, "sweep".into(), row.title]),
            Err(e) => return unusable(&e.to_string()),
        }
    }
    let width = |i: usize| lines.iter().map(|l| l[i].len()).max().unwrap_or(0);
    let (id_w, kind_w) = (width(0), width(1));
    let mut out = std::io::stdout().lock();
    for [id, kind, title] in &lines {
        let _ = writeln!(out, "{id:<id_w$}  {kind:<kind_w$}  {title}");
    }
    Finish::ok()
}
