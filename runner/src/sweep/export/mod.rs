//! The sweep's report files, one exporter per format (`--json-file`, `--csv`,
//! `--markdown`, `--svg`). Exporters render text from a finished
//! [`SweepResult`]; [`write_all`] writes the files, so a failed write is an
//! error naming the flag that asked for it.

pub mod csv;
pub mod json;
pub mod markdown;
pub mod svg;

use std::path::{Path, PathBuf};

use super::SweepResult;

/// Where each report goes.
#[derive(Debug, Clone, Default)]
pub struct Reports {
    pub json: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    /// `--svg`, else next to `--markdown` (same name, `.svg`).
    pub svg: Option<PathBuf>,
}

/// Writes `text` to `path`, creating its folder.
fn write(flag: &str, path: &Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            format!(
                "{flag} {}: cannot create {}: {e}",
                path.display(),
                dir.display()
            )
        })?;
    }
    std::fs::write(path, text).map_err(|e| format!("{flag} {}: cannot write: {e}", path.display()))
}

/// Writes every report asked for; the paths written, or the first error.
pub fn write_all(result: &SweepResult, reports: &Reports) -> Result<Vec<PathBuf>, String> {
    let mut written = Vec::new();
    if let Some(p) = &reports.json {
        write("--json-file", p, &json::render(result))?;
        written.push(p.clone());
    }
    if let Some(p) = &reports.csv {
        write(
            "--csv",
            p,
            &csv::render(result).map_err(|e| format!("--csv: {e}"))?,
        )?;
        written.push(p.clone());
    }
    if let Some(p) = &reports.svg {
        let flag = if reports.markdown.is_some() && !written.is_empty() {
            "--svg (next to --markdown)"
        } else {
            "--svg"
        };
        write(
            flag,
            p,
            &svg::render(result).map_err(|e| format!("{flag}: {e}"))?,
        )?;
        written.push(p.clone());
    }
    if let Some(p) = &reports.markdown {
        let plot = reports.svg.as_deref().map(|svg| relative_link(p, svg));
        write("--markdown", p, &markdown::render(result, plot.as_deref()))?;
        written.push(p.clone());
    }
    Ok(written)
}

/// How the Markdown at `from` links the file `to`: by name when they share
/// a folder, else by the path as given.
fn relative_link(from: &Path, to: &Path) -> String {
    let dir = |p: &Path| {
        p.parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
            .canonicalize()
            .ok()
    };
    match (dir(from), dir(to), to.file_name()) {
        (Some(a), Some(b), Some(name)) if a == b => name.to_string_lossy().into_owned(),
        _ => std::path::absolute(to)
            .unwrap_or_else(|_| to.to_path_buf())
            .display()
            .to_string(),
    }
}
