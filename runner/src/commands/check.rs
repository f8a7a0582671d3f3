//! `runner check [FILES]`: validates rows without starting anything.

use std::path::PathBuf;

use runner::exit::Outcome;
use runner::project::Project;
use runner::spec;

use super::{unusable, Finish};

pub fn run(project: &Project, files: &[PathBuf]) -> Finish {
    let files = if files.is_empty() {
        match spec::row_files(&project.specs_dir()) {
            Ok(f) => f,
            Err(e) => return unusable(&e.to_string()),
        }
    } else {
        files.to_vec()
    };
    let mut bad = 0;
    for f in &files {
        match runner::row::load_row(f) {
            Ok(row) => println!("ok    {} ({})", f.display(), row.id),
            Err(e) => {
                bad += 1;
                eprintln!("error: {e}");
            }
        }
    }
    if bad > 0 {
        Finish {
            outcome: Outcome::Unusable,
            verdicts: Vec::new(),
        }
    } else {
        Finish::ok()
    }
}
