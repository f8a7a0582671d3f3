//! SPEC rows: the YAML gate definitions under `specs/`, parsed strictly and
//! validated into a plan the engine can run.
//!
//! Every number that belongs to a claim (thread counts, work size, trials,
//! thresholds) lives in the row, not in Rust. Unknown keys are errors, and
//! every error names the file, line, column and key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::{from_yaml, SpecError};
use super::locate::locate;

/// The largest file we read as a row; a row is a few hundred bytes.
const MAX_ROW_BYTES: u64 = 256 * 1024;

/// A row as written in its YAML file.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RowFile {
    pub id: String,
    pub title: String,
    pub claim: String,
    pub probe: ProbeKind,
    #[serde(default)]
    pub server: ServerSettings,
    pub trials: Trials,
    #[serde(rename = "pair-ratio", default)]
    pub pair_ratio: Option<PairRatioFile>,
}

/// The trial budget: at least `min`, then more while the verdict is
/// ambiguous, up to `max`; still ambiguous at `max` means "cannot judge".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Trials {
    pub min: u32,
    pub max: u32,
}

/// Which measurement a row runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeKind {
    /// One request, then two at once on two connections, per mode (E19).
    PairRatio,
}

impl ProbeKind {
    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::PairRatio => "pair-ratio",
        }
    }
}

/// How the server is started for a row: the knobs a profile maps to flags.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSettings {
    /// Handler threads per worker (`--blocking-threads` on granian).
    pub threads: Option<u32>,
    /// Worker processes.
    pub workers: Option<u32>,
    /// Whether the app is imported once in the master and inherited by
    /// forked workers (`true`), or imported by each worker itself, by spawn
    /// or by import after fork (`false`). Unset: the server's default.
    pub preload: Option<bool>,
    /// Extra environment for the server process.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// The `pair-ratio:` block of a row.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PairRatioFile {
    /// KiB of fixed work per request.
    pub work_kib: u32,
    /// Untimed rounds (one single and one pair per mode) before trial 1.
    pub warmup: u32,
    pub modes: BTreeMap<String, PairModeFile>,
    /// The control's ratio minus the mode under test's must reach this.
    pub gap_at_least: f64,
    /// The no-server control must read at most this, or there is no free core.
    pub capacity_at_most: f64,
    /// A figure this close to its bound is ambiguous: take more trials.
    pub margin: f64,
}

/// One mode of a pair-ratio row.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PairModeFile {
    pub role: Role,
    /// The route, with its query; `/work` routes get `kib` and `seed` added.
    pub path: String,
    pub ratio_at_most: Option<f64>,
    pub ratio_at_least: Option<f64>,
}

/// What a mode is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// The claim: this mode must meet its expectation.
    UnderTest,
    /// The proof the probe can fail: this mode must separate from the other,
    /// or the verdict is "cannot judge".
    Control,
}

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

/// The probe-specific part of a validated row.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Plan {
    PairRatio(PairRatioPlan),
}

/// A validated pair-ratio measurement.
#[derive(Debug, Clone, Serialize)]
pub struct PairRatioPlan {
    pub work_kib: u32,
    pub warmup: u32,
    pub under_test: PairMode,
    pub control: PairMode,
    pub gap_at_least: f64,
    pub capacity_at_most: f64,
    pub margin: f64,
}

/// A validated mode with its one-sided expectation.
#[derive(Debug, Clone, Serialize)]
pub struct PairMode {
    pub name: String,
    pub path: String,
    pub bound: Bound,
}

/// A one-sided limit on a ratio.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    AtMost(f64),
    AtLeast(f64),
}

impl Bound {
    pub fn holds(self, value: f64) -> bool {
        match self {
            Bound::AtMost(limit) => value <= limit,
            Bound::AtLeast(limit) => value >= limit,
        }
    }
}

impl std::fmt::Display for Bound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bound::AtMost(v) => write!(f, "<= {v:.2}x"),
            Bound::AtLeast(v) => write!(f, ">= {v:.2}x"),
        }
    }
}

/// Reads and validates one row file.
pub fn load_row(file: &Path) -> Result<Row, SpecError> {
    let source = read_bounded(file)?;
    parse_row(file, &source)
}

/// Reads a spec file, refusing oversized and non-UTF-8 files with a message.
pub fn read_bounded(file: &Path) -> Result<String, SpecError> {
    let meta =
        std::fs::metadata(file).map_err(|e| SpecError::new(file, format!("cannot read: {e}")))?;
    if meta.len() > MAX_ROW_BYTES {
        return Err(SpecError::new(
            file,
            format!(
                "is {} bytes; a spec file is at most {MAX_ROW_BYTES}",
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
        SpecError::new(file, "is not UTF-8 text").at(super::locate::Location { line, column })
    })
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
    if raw.id.trim().is_empty()
        || !raw
            .id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(err(
            &["id"],
            format!("{:?} is not a row id (letters, digits, - and _)", raw.id),
        ));
    }
    if let Some(stem) = file.file_stem().and_then(|s| s.to_str()) {
        if stem != raw.id && file.parent().and_then(|p| p.file_name()) == Some("specs".as_ref()) {
            return Err(err(
                &["id"],
                format!(
                    "is {:?} but the file is {stem}.yaml; rename one so `runner gate {}` finds it",
                    raw.id, raw.id
                ),
            ));
        }
    }
    if !(1..=1000).contains(&raw.trials.min) {
        return Err(err(
            &["trials", "min"],
            format!("is {}; it must be between 1 and 1000", raw.trials.min),
        ));
    }
    if !(raw.trials.min..=1000).contains(&raw.trials.max) {
        return Err(err(
            &["trials", "max"],
            format!(
                "is {}; it must be between trials.min ({}) and 1000",
                raw.trials.max, raw.trials.min
            ),
        ));
    }
    for (knob, value) in [
        ("threads", raw.server.threads),
        ("workers", raw.server.workers),
    ] {
        if let Some(v) = value {
            if !(1..=256).contains(&v) {
                return Err(err(
                    &["server", knob],
                    format!("is {v}; it must be between 1 and 256"),
                ));
            }
        }
    }
    let plan = match raw.probe {
        ProbeKind::PairRatio => {
            let Some(block) = raw.pair_ratio.as_ref() else {
                return Err(err(
                    &["probe"],
                    "is pair-ratio but the row has no `pair-ratio:` block".into(),
                ));
            };
            Plan::PairRatio(validate_pair_ratio(block, &err)?)
        }
    };
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

fn validate_pair_ratio(
    block: &PairRatioFile,
    err: &dyn Fn(&[&str], String) -> SpecError,
) -> Result<PairRatioPlan, SpecError> {
    const B: &str = "pair-ratio";
    // 64 KiB is the releasing buffer; the work must be whole buffers.
    if block.work_kib == 0 || block.work_kib % 64 != 0 || block.work_kib > 1 << 20 {
        return Err(err(
            &[B, "work_kib"],
            format!(
                "is {}; it must be a multiple of 64 between 64 and 1048576",
                block.work_kib
            ),
        ));
    }
    if block.warmup > 100 {
        return Err(err(
            &[B, "warmup"],
            format!("is {}; at most 100", block.warmup),
        ));
    }
    for (key, v) in [
        ("gap_at_least", block.gap_at_least),
        ("capacity_at_most", block.capacity_at_most),
        ("margin", block.margin),
    ] {
        if !v.is_finite() || !(0.0..=100.0).contains(&v) {
            return Err(err(
                &[B, key],
                format!("is {v}; it must be a ratio between 0 and 100"),
            ));
        }
    }
    let mut under_test = None;
    let mut control = None;
    for (name, mode) in &block.modes {
        let at = |key: &'static str| vec![B, "modes", name.as_str(), key];
        if !mode.path.starts_with('/') || mode.path.contains(char::is_whitespace) {
            return Err(err(
                &at("path"),
                format!(
                    "{:?} must be a route starting with / and without spaces",
                    mode.path
                ),
            ));
        }
        let bound = match (mode.ratio_at_most, mode.ratio_at_least) {
            (Some(v), None) => Bound::AtMost(v),
            (None, Some(v)) => Bound::AtLeast(v),
            _ => {
                return Err(err(
                    &at("role"),
                    "needs exactly one of ratio_at_most and ratio_at_least".into(),
                ))
            }
        };
        let v = match bound {
            Bound::AtMost(v) | Bound::AtLeast(v) => v,
        };
        if !v.is_finite() || !(0.0..=100.0).contains(&v) {
            return Err(err(
                &at("role"),
                format!("has a bound of {v}; it must be a ratio between 0 and 100"),
            ));
        }
        let slot = match mode.role {
            Role::UnderTest => &mut under_test,
            Role::Control => &mut control,
        };
        if slot.is_some() {
            return Err(err(
                &at("role"),
                format!(
                    "a second {:?} mode; a pair-ratio row has one mode under test and one control",
                    mode.role
                ),
            ));
        }
        *slot = Some(PairMode {
            name: name.clone(),
            path: mode.path.clone(),
            bound,
        });
    }
    let (Some(under_test), Some(control)) = (under_test, control) else {
        return Err(err(
            &[B, "modes"],
            "needs one mode with role under-test and one with role control".into(),
        ));
    };
    if block.modes.len() != 2 {
        return Err(err(
            &[B, "modes"],
            format!(
                "has {} modes; a pair-ratio row has exactly two",
                block.modes.len()
            ),
        ));
    }
    Ok(PairRatioPlan {
        work_kib: block.work_kib,
        warmup: block.warmup,
        under_test,
        control,
        gap_at_least: block.gap_at_least,
        capacity_at_most: block.capacity_at_most,
        margin: block.margin,
    })
}
