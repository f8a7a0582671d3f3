//! The spec files: SPEC rows (`specs/*.yaml`) and server profiles
//! (`specs/servers/*.yaml`), found by id or name, or given as paths.

pub mod row;

pub mod check;
pub mod error;
pub mod interface;
pub mod locate;
pub mod mode;
pub mod profile;
pub mod settings;
pub mod trials;

use std::path::{Path, PathBuf};

pub use error::SpecError;
pub use interface::Interface;
pub use mode::{Mode, ModeFile, RatioBound, Role};
pub use profile::{load_profile, Profile};
pub use settings::ServerSettings;
pub use trials::Trials;

/// The largest file we read as a row or profile; a row is a few hundred bytes.
const MAX_SPEC_BYTES: u64 = 256 * 1024;

/// Reads a spec file, refusing oversized and non-UTF-8 files with a message.
pub fn read_bounded(file: &Path) -> Result<String, SpecError> {
    let meta =
        std::fs::metadata(file).map_err(|e| SpecError::new(file, format!("cannot read: {e}")))?;
    if meta.len() > MAX_SPEC_BYTES {
        return Err(SpecError::new(
            file,
            format!(
                "is {} bytes; a spec file is at most {MAX_SPEC_BYTES}",
                meta.len()
            ),
        ));
    }
    let bytes =
        std::fs::read(file).map_err(|e| SpecError::new(file, format!("cannot read: {e}")))?;
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let valid = &e.as_bytes()[..offset];
        let line = valid.iter().filter(|b| **b == b'\n').count() + 1;
        let column = offset - valid.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1) + 1;
        SpecError::new(file, "is not UTF-8 text").at(locate::Location { line, column })
    })
}

/// Every YAML file in `dir` (not recursive: `specs/servers/` holds profiles).
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

/// Whether a name given for a row or profile is a path to its file rather
/// than an id (`x.yaml`, `dir/x`).
pub fn names_a_file(name: &str) -> bool {
    name.ends_with(".yaml") || name.ends_with(".yml") || Path::new(name).components().count() > 1
}

/// The ids of the YAML files in `dir` (`a, b`), or `none`, for messages
/// that list what could have been meant.
pub fn known_ids(dir: &Path) -> Result<String, SpecError> {
    let ids: Vec<String> = if dir.is_dir() {
        row_files(dir)?
    } else {
        Vec::new()
    }
    .iter()
    .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(String::from))
    .collect();
    Ok(if ids.is_empty() {
        "none".into()
    } else {
        ids.join(", ")
    })
}

/// Resolves a server profile by name (`specs/servers/NAME.yaml`) or path.
pub fn resolve_profile(servers_dir: &Path, name_or_path: &str) -> Result<Profile, SpecError> {
    let as_path = Path::new(name_or_path);
    if names_a_file(name_or_path) {
        return load_profile(as_path);
    }
    let file = servers_dir.join(format!("{name_or_path}.yaml"));
    if !file.is_file() {
        return Err(SpecError::new(
            servers_dir,
            format!(
                "no server profile {name_or_path:?} (--server); known: {}",
                known_ids(servers_dir)?
            ),
        ));
    }
    load_profile(&file)
}
