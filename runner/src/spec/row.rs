//! SPEC rows: the YAML gate definitions under `specs/`, parsed strictly and
//! validated into a plan the engine can run. The common header (id, title,
//! claim, probe, server, trials) is checked here; each probe kind checks its
//! own block through the registry (`probe/registry.rs`).
//!
//! Every number that belongs to a claim (thread counts, work size, trials,
//! thresholds) lives in the row, not in Rust. Unknown keys are errors, and
//! every error names the file, line, column and key.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::probe::registry::{validate_block, RowFile};
use crate::probe::registry::{Plan, ProbeKind};
use crate::spec::check::{check_settings, int_in_range};
use crate::spec::error::from_yaml;
use crate::spec::locate::locate;
use crate::spec::{read_bounded, row_files, ServerSettings, SpecError, Trials};

/// A row that passed validation.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub id: String,
    pub title: String,
    pub claim: String,
    pub probe: ProbeKind,
    pub server: ServerSettings,
    pub trials: Trials,
    pub plan: Plan,
    /// Where the row came from, for messages and annotations.
    pub file: PathBuf,
    /// The line of `id:`, for annotations pointing at the row.
    pub line: usize,
}

impl Row {
    /// The server settings the row runs on, mode under test first; empty
    /// for a probe that needs no server.
    pub fn servers(&self) -> Vec<ServerSettings> {
        self.plan.servers(&self.server)
    }
}

/// Reads and validates one row file.
pub fn load_row(file: &Path) -> Result<Row, SpecError> {
    let source = read_bounded(file)?;
    parse_row(file, &source)
}

/// Parses and validates a row from its source text.
pub fn parse_row(file: &Path, source: &str) -> Result<Row, SpecError> {
    if source.trim().is_empty() {
        return Err(SpecError::new(file, "is empty; a row needs id, title, claim, probe, trials and its probe block (see specs/README.md)"));
    }
    let raw: RowFile = serde_norway::from_str(source).map_err(|e| from_yaml(file, &e))?;
    validate(file, source, raw)
}

fn validate(file: &Path, source: &str, raw: RowFile) -> Result<Row, SpecError> {
    let err = |path: &[&str], message: String| {
        SpecError::new(file, message)
            .at(locate(source, path))
            .key(path.join("."))
    };
    // Outside specs/ (a row given by path) the file may be named anything.
    let in_specs = file.parent().and_then(|p| p.file_name()) == Some("specs".as_ref());
    check_id(file, &raw.id, in_specs.then_some("gate"), &err)?;
    int_in_range(&["trials", "min"], raw.trials.min, 1..=1000, &err)?;
    if !(raw.trials.min..=1000).contains(&raw.trials.max) {
        return Err(err(
            &["trials", "max"],
            format!(
                "is {}; it must be between trials.min ({}) and 1000",
                raw.trials.max, raw.trials.min
            ),
        ));
    }
    check_settings(&["server"], &raw.server, &err)?;
    let plan = validate_block(&raw, &err)?;
    Ok(Row {
        line: locate(source, &["id"]).line,
        id: raw.id,
        title: raw.title,
        claim: raw.claim,
        probe: raw.probe,
        server: raw.server,
        trials: raw.trials,
        plan,
        file: file.to_path_buf(),
    })
}

/// A row id is letters, digits, `-` and `_`; with `command` (`gate`,
/// `sweep`), the file must be named after it so `runner COMMAND ID` finds it.
pub fn check_id(
    file: &Path,
    id: &str,
    command: Option<&str>,
    err: &crate::spec::check::ErrAt<'_>,
) -> Result<(), SpecError> {
    if id.trim().is_empty()
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(err(
            &["id"],
            format!("{id:?} is not a row id (letters, digits, - and _)"),
        ));
    }
    match (command, file.file_stem().and_then(|s| s.to_str())) {
        (Some(command), Some(stem)) if stem != id => Err(err(
            &["id"],
            format!(
                "is {id:?} but the file is {stem}.yaml; rename one so `runner {command} {id}` finds it"
            ),
        )),
        _ => Ok(()),
    }
}

/// The JSON Schema of a row file (`specs/row.schema.json`), for editors.
pub fn row_schema() -> String {
    let schema = schemars::schema_for!(RowFile);
    serde_json::to_string_pretty(&schema).unwrap_or_default() + "\n"
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
        if crate::spec::names_a_file(w) {
            rows.push(load_row(as_path)?);
            continue;
        }
        let file = dir.join(format!("{w}.yaml"));
        if !file.is_file() {
            return Err(SpecError::new(
                dir,
                format!(
                    "no row {w:?}; known rows: {} (or give a path to a row file)",
                    crate::spec::known_ids(dir)?
                ),
            ));
        }
        rows.push(load_row(&file)?);
    }
    Ok(rows)
}

/// The rows `wanted` names and the server profile `server` names.
pub fn rows_and_profile(
    project: &crate::host::project::Project,
    wanted: &[String],
    server: &str,
) -> Result<(Vec<Row>, crate::spec::Profile), String> {
    let rows = resolve_rows(&project.specs_dir(), wanted).map_err(|e| e.to_string())?;
    let profile =
        crate::spec::resolve_profile(&project.servers_dir(), server).map_err(|e| e.to_string())?;
    Ok((rows, profile))
}
