//! The spec files: SPEC rows (`specs/*.yaml`) and server profiles
//! (`specs/servers/*.yaml`), found by id or name, or given as paths.

pub mod error;
pub mod locate;
pub mod profile;
pub mod row;

use std::path::{Path, PathBuf};

pub use error::SpecError;
pub use profile::{load_profile, Profile};
pub use row::{load_row, Row};

/// Every row file in `dir` (not recursive: `servers/` holds profiles).
pub fn row_files(dir: &Path) -> Result<Vec<PathBuf>, SpecError> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| SpecError::new(dir, format!("cannot list rows: {e}")))?;
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    Ok(files)
}

/// Resolves each of `wanted` (a row id, a path to a row file, or `all`);
/// nothing wanted means all.
pub fn resolve_rows(dir: &Path, wanted: &[String]) -> Result<Vec<Row>, SpecError> {
    let all = ["all".to_string()];
    let wanted = if wanted.is_empty() { &all[..] } else { wanted };
    let mut rows = Vec::new();
    for w in wanted {
        if w == "all" {
            for f in row_files(dir)? {
                rows.push(load_row(&f)?);
            }
            continue;
        }
        let as_path = Path::new(w);
        if w.ends_with(".yaml") || w.ends_with(".yml") || as_path.components().count() > 1 {
            rows.push(load_row(as_path)?);
            continue;
        }
        let file = dir.join(format!("{w}.yaml"));
        if !file.is_file() {
            let known: Vec<String> = row_files(dir)?
                .iter()
                .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(String::from))
                .collect();
            return Err(SpecError::new(
                dir,
                format!(
                    "no row {w:?}; known rows: {} (or give a path to a row file)",
                    known.join(", ")
                ),
            ));
        }
        rows.push(load_row(&file)?);
    }
    Ok(rows)
}

/// Resolves a server profile by name (`specs/servers/NAME.yaml`) or path.
pub fn resolve_profile(servers_dir: &Path, name_or_path: &str) -> Result<Profile, SpecError> {
    let as_path = Path::new(name_or_path);
    if name_or_path.ends_with(".yaml")
        || name_or_path.ends_with(".yml")
        || as_path.components().count() > 1
    {
        return load_profile(as_path);
    }
    let file = servers_dir.join(format!("{name_or_path}.yaml"));
    if !file.is_file() {
        let known: Vec<String> = row_files(servers_dir)?
            .iter()
            .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(String::from))
            .collect();
        return Err(SpecError::new(
            servers_dir,
            format!(
                "no server profile {name_or_path:?} (--server); known: {}",
                known.join(", ")
            ),
        ));
    }
    load_profile(&file)
}
