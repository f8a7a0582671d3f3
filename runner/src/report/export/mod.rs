//! Report files for CI, one exporter per format (`--json-file`, `--junit`,
//! `--markdown`), and GitHub Actions' workflow commands. Exporters only
//! render text from finished results; [`ExportManager`] writes the files,
//! so a failed write is one error naming the flag that asked for it.

pub mod github;
pub mod json;
pub mod junit;
pub mod markdown;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::gate::result::GateResult;
use crate::report::json::Interrupted;

/// Everything an exporter may show: the results of one run and where it ran.
pub struct ExportInput<'a> {
    pub results: &'a [GateResult],
    pub interrupted: Option<&'a Interrupted>,
    /// The project root: row files are shown relative to it.
    pub root: &'a Path,
    /// When the run started (JUnit's `timestamp`).
    pub started: SystemTime,
    /// How long the whole run took.
    pub wall: Duration,
}

/// One report format.
pub trait Exporter {
    fn render(&self, input: &ExportInput<'_>) -> String;
}

/// The formats a file can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Junit,
    Markdown,
}

impl Format {
    /// The flag of `runner gate` that asks for this format.
    pub fn flag(self) -> &'static str {
        match self {
            Format::Json => "--json-file",
            Format::Junit => "--junit",
            Format::Markdown => "--markdown",
        }
    }

    fn exporter(self) -> Box<dyn Exporter> {
        match self {
            Format::Json => Box::new(json::JsonExporter),
            Format::Junit => Box::new(junit::JunitExporter),
            Format::Markdown => Box::new(markdown::MarkdownExporter::default()),
        }
    }
}

/// Why a report could not be written: the cause, and what to do.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot write {flag} {path}: {source}; point {flag} at a writable file")]
    Write {
        flag: &'static str,
        path: String,
        source: std::io::Error,
    },
    #[error(
        "cannot append to GITHUB_STEP_SUMMARY ({path}): {source}; unset it outside GitHub Actions"
    )]
    StepSummary {
        path: String,
        source: std::io::Error,
    },
}

/// The report files one run writes.
#[derive(Default)]
pub struct ExportManager {
    targets: Vec<(Format, PathBuf)>,
    /// `$GITHUB_STEP_SUMMARY`, appended with the Markdown summary when a
    /// Markdown report is asked for.
    step_summary: Option<PathBuf>,
}

impl ExportManager {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, format: Format, path: Option<&Path>) {
        if let Some(path) = path {
            self.targets.push((format, path.to_path_buf()));
        }
    }

    /// Also append the Markdown summary to `path` (GitHub's step summary).
    pub fn with_step_summary(&mut self, path: Option<PathBuf>) {
        self.step_summary = path.filter(|p| !p.as_os_str().is_empty());
    }

    pub fn is_empty(&self) -> bool {
        self.targets.is_empty()
    }

    /// Writes every file (creating missing parent folders); stops at the first error.
    pub fn write_all(&self, input: &ExportInput<'_>) -> Result<(), ExportError> {
        for (format, path) in &self.targets {
            let text = format.exporter().render(input);
            let fail = |source| ExportError::Write {
                flag: format.flag(),
                path: path.display().to_string(),
                source,
            };
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(fail)?;
            }
            std::fs::write(path, &text).map_err(fail)?;
            if *format == Format::Markdown {
                if let Some(summary) = &self.step_summary {
                    append(summary, &text).map_err(|source| ExportError::StepSummary {
                        path: summary.display().to_string(),
                        source,
                    })?;
                }
            }
        }
        Ok(())
    }
}

fn append(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    f.write_all(text.as_bytes())?;
    f.write_all(b"\n")
}

/// `path` relative to `root` when it is inside it (`specs/E19.yaml`), else as is.
pub fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// `t` as an ISO 8601 UTC timestamp to the second (`2024-05-01T12:00:00Z`).
pub fn iso8601(t: SystemTime) -> String {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::gate::result::RowRef;
    use crate::probe::Judgement;
    use crate::server::pool::ServerRun;
    use crate::verdict::Verdict;

    /// A result of E19 on granian with `verdict`, as reports see it.
    pub(crate) fn sample(verdict: Verdict, reason: &str) -> GateResult {
        let mut judgement = Judgement::bare(verdict, reason.into());
        judgement.headline = "2.01x/2.03x".into();
        GateResult {
            row: RowRef {
                id: "E19".into(),
                title: "A view that releases the GIL runs in parallel".into(),
                claim: "claim".into(),
                probe: "pair-ratio".into(),
                file: PathBuf::from("/work/main/specs/E19.yaml"),
                line: 6,
            },
            servers: vec![ServerRun {
                profile: "granian".into(),
                settings: "threads=2".into(),
                argv: vec!["python".into()],
                pgid: Some(42),
                log: PathBuf::from("/work/main/.gates/logs/E19.granian.log"),
                ready_ms: Some(120.0),
                survivors: false,
                stopped: Some(crate::host::process::StopOutcome::Terminated),
                log_dropped_bytes: 0,
            }],
            profile: "granian".into(),
            judgement,
            run: None,
            log_tail: (verdict != Verdict::Pass)
                .then(|| "[INFO] <started> & \u{1b}[31mred\u{1b}[0m".to_string()),
            elapsed_ms: 2500.0,
        }
    }

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        assert_eq!(iso8601(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        // 2000-02-29 (a leap day in a century leap year) 12:34:56.
        let t = UNIX_EPOCH + Duration::from_secs(951_827_696);
        assert_eq!(iso8601(t), "2000-02-29T12:34:56Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_709_251_199);
        assert_eq!(iso8601(t), "2024-02-29T23:59:59Z");
    }

    #[test]
    fn rows_inside_the_project_are_shown_relative() {
        let root = Path::new("/work/main");
        assert_eq!(
            relative(root, Path::new("/work/main/specs/E19.yaml")),
            "specs/E19.yaml"
        );
        assert_eq!(relative(root, Path::new("/tmp/x.yaml")), "/tmp/x.yaml");
    }
}
